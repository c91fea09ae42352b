package limits

import (
	"strings"
	"testing"
)

func TestScanBody(t *testing.T) {
	for _, c := range []struct {
		body         string
		depth, parts int
		method       string
	}{
		{`{}`, 1, 0, ""},
		{`{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"parts":[{"text":"a"},{"text":"b, [c]"}]}}}`, 5, 2, "SendMessage"},
		{`{"params":{"method":"inner"},"method" : "message/stream"}`, 2, 0, "message/stream"},
		{`{"parts":[]}`, 2, 0, ""},
		{`{"parts":[1,[2,3],{"parts":[1,2,3,4]}]}`, 4, 4, ""},
		{`[{"parts":1},[1,2,3]]`, 2, 0, ""},
		{`{"text":"\"parts\":[1,2,3]"}`, 1, 0, ""},
		{`{"method":"a\"b"}`, 1, 0, `a"b`},
		{`{"Method":"Send\u004dessage"}`, 1, 0, "SendMessage"},
		{`{"m\u0065thod":"x","METHOD":"y"}`, 1, 0, "y"},
		{`{"method":"x","method":null}`, 1, 0, "x"},
		{`{"method":"x"} {"method":"y"}`, 1, 0, "x"},
		{`null {"method":"y"}`, 1, 0, ""},
		{`{"Parts":[1,2]}`, 2, 2, ""},
		{`{"p\u0061rts":[1,2,3]}`, 2, 3, ""},
		{`{"part\u017f":[1,2,3]}`, 2, 3, ""},
		{`{"parts":[` + strings.Repeat("1,", 99) + `1]}`, 2, 100, ""},
		{`{"unterminated`, 1, 0, ""},
	} {
		sh := scanBody([]byte(c.body), 64)
		if sh.depth != c.depth || sh.maxParts != c.parts || sh.method != c.method {
			t.Errorf("scanBody(%s) = depth %d, parts %d, method %q; want %d, %d, %q", c.body, sh.depth, sh.maxParts, sh.method, c.depth, c.parts, c.method)
		}
	}
}
