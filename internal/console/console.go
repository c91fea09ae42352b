package console

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
)

//go:embed static
var static embed.FS

// Prefix is where the console's files are served.
const Prefix = "/console/"

// Wrap returns a handler that serves the console at / and under Prefix and
// passes every other request to next.
func Wrap(next http.Handler) http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic(err)
	}
	csp := policy(index)
	fileServer := http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p != "/" && p != "/console" && !strings.HasPrefix(p, Prefix) {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the console's files answer GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		setHeaders(w.Header(), csp)
		switch {
		case p == "/" || p == "/console" || p == Prefix:
			http.ServeFileFS(w, r, files, "index.html")
			return
		case strings.HasSuffix(p, "/"):
			http.NotFound(w, r) // no directory listings
			return
		}
		fileServer.ServeHTTP(w, r)
	})
}

// inlineScript finds index.html's one inline script: its import map.
var inlineScript = regexp.MustCompile(`(?s)<script type="importmap">(.*?)</script>`)

// policy is the Content-Security-Policy of the console's files: scripts,
// styles and connections of this origin only (and index.html's import map,
// by its hash), no framing, no forms posted anywhere.
func policy(index []byte) string {
	m := inlineScript.FindSubmatch(index)
	if m == nil {
		panic("console: index.html has no import map")
	}
	sum := sha256.Sum256(m[1])
	return "default-src 'self'; script-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}

// setHeaders sets the policy, and keeps the files from being sniffed,
// cached stale or leaking the page's address in a Referer.
func setHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}
