package main

import (
	"net/http"

	"agentd/internal/console"
)

// withConsole serves the web console at / and /console/… in front of the
// API: its files are public (they hold no data; the console asks for a
// key when the API answers 401), every other path goes to h unchanged.
func withConsole(h http.Handler) http.Handler { return console.Wrap(h) }
