// Package pgtest gives tests a PostgreSQL database of their own, holding
// agentd's migrated schema and no data: DSN(t) returns its DSN, and the
// test binary's TestMain calls Main (or Run) so that whatever the tests
// started is stopped when they end.
//
// Where the server comes from, in order:
//
//  1. TEST_DATABASE_URL, a running server (CI and developers);
//  2. a throwaway cluster initialised from the local binaries (initdb and
//     pg_ctl on PATH, else /usr/lib/postgresql/*/bin) in a temporary
//     directory, on 127.0.0.1 at a free port, without fsync; as root the
//     binaries run as the postgres account (runuser). Main stops it and
//     removes the directory;
//  3. nothing: every database test is skipped with the reason, printed to
//     stderr once as well — unless REQUIRE_DB=1, which makes it a failure,
//     so CI never skips silently.
//
// Databases. Once per test binary the harness builds a template database,
// agentd_tmpl_<hash of migrations/*.sql>, under an advisory lock (go test
// runs package binaries in parallel against one server): it migrates a
// scratch database and renames it when complete, so a crashed builder
// leaves no half-migrated template, and disallows connections to it so it
// can always be cloned. A changed migration gets a new template name.
//
// DSN clones the template (CREATE DATABASE … TEMPLATE) for a test. Cloning
// costs about half a second on a server that syncs to disk, so when a test
// ends its database is not dropped but emptied — its other sessions are
// terminated and every data table is cleared, goose's version table kept —
// and handed to the next test of the binary; Main drops them all at the
// end. A database therefore serves one test at a time and every test starts
// from the template's state. EmptyDSN gives a database without the schema,
// always new and dropped, for migration tests.
//
// The harness's state (server, template, idle databases, cluster) is
// package-level on purpose: it lives exactly as long as the test binary,
// which Main brackets.
//
// Imports: migrations, store/pgstore. Only tests import pgtest.
package pgtest
