package main

import (
	"context"
	"testing"

	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// Each command's PostgreSQL sessions carry its name, so an operator reading pg_stat_activity
// knows which component holds a connection or a lock; a URL that names them itself wins.
func TestPoolSessionsNameTheirCommand(t *testing.T) {
	db := testenv.NewDatabase(t)
	ctx := context.Background()
	for _, tc := range []struct{ url, want string }{
		{db.URL, "hookstream-recorder"},
		{db.URL + "&application_name=billing-hooks", "billing-hooks"},
	} {
		pool, err := settings{DatabaseURL: tc.url}.openPool(ctx, "recorder")
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = pool.QueryRow(ctx, `SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()`).Scan(&got)
		pool.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("URL %s: application_name %q, want %q", tc.url, got, tc.want)
		}
	}
}
