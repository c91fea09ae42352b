package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadBodyMatchesMaxBytesReader compares readBody with the io.ReadAll
// over http.MaxBytesReader it stands for: same bytes, same error.
func TestReadBodyMatchesMaxBytesReader(t *testing.T) {
	const limit = 100
	failing := errors.New("connection reset")
	for _, size := range []int{0, 1, 50, limit - 1, limit, limit + 1, limit + 2, 3 * limit, 5000} {
		body := strings.Repeat("x", size)
		for _, cl := range []int64{int64(size), -1, 0, int64(size) / 2, int64(size) + 10} {
			for _, broken := range []bool{false, true} {
				newReq := func() *http.Request {
					var rd io.Reader = strings.NewReader(body)
					if broken {
						rd = io.MultiReader(iotest.HalfReader(strings.NewReader(body)), iotest.ErrReader(failing))
					}
					req := httptest.NewRequest(http.MethodPost, "/", rd)
					req.ContentLength = cl
					return req
				}
				want, wantErr := io.ReadAll(http.MaxBytesReader(httptest.NewRecorder(), newReq().Body, limit))
				got, err := readBody(httptest.NewRecorder(), newReq(), limit, nil)
				name := fmt.Sprintf("size %d, Content-Length %d, broken %v", size, cl, broken)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("%s: error %v, want %v", name, err, wantErr)
				}
				var mbe *http.MaxBytesError
				if errors.As(wantErr, &mbe) != errors.As(err, &mbe) {
					t.Errorf("%s: error %#v, want %#v", name, err, wantErr)
				}
				if wantErr == nil && !bytes.Equal(got, want) {
					t.Errorf("%s: read %d bytes, want %d", name, len(got), len(want))
				}
			}
		}
	}
}

// TestOversizedBodyClosesTheConnection checks that the server still learns
// of the excess, as with http.MaxBytesReader, and so does not keep the
// connection to read the rest of the body.
func TestOversizedBodyClosesTheConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body sendBody
		if err := decodeJSON(w, r, 64, &body); err != nil {
			writeError(w, r, err)
		}
	}))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"text":"`+strings.Repeat("y", 100)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Fatalf("status %d, Connection: close %v; want 413 and close", resp.StatusCode, resp.Close)
	}
}

func TestCheckBodyType(t *testing.T) {
	for ct, want := range map[string]bool{
		"": true, "application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true,
		"application/json; charset=UTF-8": true, "application/json; charset=\"utf-8\"": true,
		"application/problem+json": true, "application/x-www-form-urlencoded": true,
		"application/json;": true, "text/plain": false, "application/jsonx": false, "json": false,
		"application/json; charset=latin1": false, "application/x-www-form-urlencoded; charset=iso-8859-1": false,
	} {
		if err := checkBodyType(ct); (err == nil) != want {
			t.Errorf("checkBodyType(%q) = %v, want accepted %v", ct, err, want)
		}
	}
}

// BenchmarkDecodeSendBody is decodeJSON of a blocking send's body.
func BenchmarkDecodeSendBody(b *testing.B) {
	for name, body := range map[string]string{
		"text":    `{"text":"hello world"}`,
		"message": `{"message":{"role":"user","parts":[{"type":"text","text":"hello world"}]},"context_id":"c1","metadata":{"k":"v"}}`,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			rd := strings.NewReader(body)
			req := httptest.NewRequest(http.MethodPost, "/v1/agents/echo/messages", rd)
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			for b.Loop() {
				rd.Reset(body)
				var v sendBody
				if err := decodeJSON(w, req, 1<<20, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
