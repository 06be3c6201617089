package migrations

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ApplyThrough applies the migrations up to and including version, as an older binary would.
func ApplyThrough(ctx context.Context, conn *pgx.Conn, version int) ([]int, error) {
	return apply(ctx, conn, version)
}

// Checksum is the checksum Apply records for a migration file's text.
func Checksum(sql string) string { return checksum(sql) }

// LegacyChecksums are the whole-file sums older binaries recorded, as Apply accepts them.
var LegacyChecksums = legacyChecksums
