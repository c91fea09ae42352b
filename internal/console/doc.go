// Package console serves agentd's web console: the static files under
// static/ (plain ES modules, Preact and htm vendored at pinned versions
// with their licences), embedded in the binary, at / and /console/….
//
// It owns no state and no API of its own: the pages talk to the public
// REST + SSE API (/v1/…) with the caller's credential, which the browser
// keeps in sessionStorage. The files are public, like the agent cards:
// they hold no data, and the console asks for a key when the API answers
// 401.
//
// It imports only the standard library. Routes it takes: GET and HEAD of
// "/" (the console's page) and of "/console/…" (its files); every other
// request goes to the wrapped handler, so no API route is shadowed.
//
//	path                     served
//	/                        static/index.html
//	/console/, /console      static/index.html
//	/console/js/…            static/js/… (pages, components, API client)
//	/console/vendor/…        static/vendor/… (preact, htm, their licences)
//
// Imports: none.
package console
