// Package migrations holds agentd's PostgreSQL schema as goose SQL
// migrations, embedded so that the binary migrates its own database at start
// (pgstore.Open) without files on disk.
//
// Files are named NNNNN_what.sql and are append-only: a released migration
// is never edited, a change is a new file. internal/pgtest hashes these files
// to name its template database, so an edit here re-creates test templates.
//
// Imports: none.
package migrations

import "embed"

// FS holds every migration, applied in version order by pgstore.
//
//go:embed *.sql
var FS embed.FS
