package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookstream/hookstream/internal/records"
	"github.com/hookstream/hookstream/internal/secretbox"
)

// ResealCount is what Reseal did with one kind of sealed value.
type ResealCount struct {
	Resealed int // sealed again under the active key
	Current  int // sealed under the active key already
}

// ResealReport is what Reseal did, by kind of stored value, and the values it could not open.
type ResealReport struct {
	SigningSecrets    ResealCount // endpoint_secret.secret_ciphertext
	RequestOptions    ResealCount // the auth secret and client-certificate key in endpoint.request_options
	IdempotentAnswers ResealCount // idempotency_key.response
	// Unopened names each value no key of the keyring opens (its row, and why: an unknown key
	// id, or a failed authentication), never the value. Reseal goes on past them.
	Unopened []string
}

// ErrUnopened is returned by Reseal, wrapped with the count, when some values did not open.
var ErrUnopened = errors.New("stored values that no key of the keyring opens")

// Reseal seals every secret the admin API stored again under the active key of keys (design.md
// section 4): the endpoints' signing secrets, the secrets of their request options and the
// stored answers of idempotent requests. It reads batch rows at a time, in key order, and
// writes each changed row in its own statement that compares the stored value with the one it
// read (compare-and-swap): a row the API changed in between is read again and resealed from its
// new value, never overwritten with a stale one; a row deleted in between is passed over. A
// value in the keyed format under the active key already is left as it is, so a second run, or
// one after an interrupted run, changes nothing it need not. progress, if not nil, is called
// after each batch.
func Reseal(ctx context.Context, pool *pgxpool.Pool, keys secretbox.Keyring, batch int, progress func(ResealReport)) (ResealReport, error) {
	var rep ResealReport
	if keys.IsZero() {
		return rep, errors.New("reseal: no keys")
	}
	if batch < 1 {
		return rep, fmt.Errorf("reseal: batch %d is below 1", batch)
	}
	r := resealer{pool: pool, keys: keys, batch: batch, rep: &rep, progress: progress}
	for _, step := range []func(context.Context) error{r.signingSecrets, r.requestOptions, r.idempotentAnswers} {
		if err := step(ctx); err != nil {
			return rep, err
		}
	}
	if n := len(rep.Unopened); n > 0 {
		return rep, fmt.Errorf("reseal: %d %w", n, ErrUnopened)
	}
	return rep, nil
}

type resealer struct {
	pool     *pgxpool.Pool
	keys     secretbox.Keyring
	batch    int
	rep      *ResealReport
	progress func(ResealReport)
}

func (r *resealer) report() {
	if r.progress != nil {
		r.progress(*r.rep)
	}
}

// swap writes a row's new value where the row still holds old; it reports whether it did.
type swap func(ctx context.Context, newValue, old []byte) (bool, error)

// reread returns a row's current value, and false when the row is gone.
type reread func(ctx context.Context) ([]byte, bool, error)

// resealRow reseals one row's value until it is current or the row is gone: each lost race
// with a concurrent writer rereads the row.
func (r *resealer) resealRow(ctx context.Context, what string, value, aad []byte, count *ResealCount, write swap, read reread) error {
	for {
		sealed, changed, err := r.keys.Reseal(value, aad)
		if err != nil {
			r.rep.Unopened = append(r.rep.Unopened, fmt.Sprintf("%s: %v", what, err))
			return nil
		}
		if !changed {
			count.Current++
			return nil
		}
		ok, err := write(ctx, sealed, value)
		if err != nil {
			return fmt.Errorf("reseal %s: %w", what, err)
		}
		if ok {
			count.Resealed++
			return nil
		}
		var found bool
		if value, found, err = read(ctx); err != nil {
			return fmt.Errorf("reseal %s: reread: %w", what, err)
		} else if !found {
			return nil
		}
	}
}

func (r *resealer) signingSecrets(ctx context.Context) error {
	var afterEndpoint, afterID string
	for {
		type row struct {
			endpointID, id string
			sealed         []byte
		}
		rows, err := r.pool.Query(ctx, `SELECT endpoint_id, id, secret_ciphertext FROM endpoint_secret
			WHERE (endpoint_id, id) > ($1, $2) ORDER BY endpoint_id, id LIMIT $3`, afterEndpoint, afterID, r.batch)
		if err != nil {
			return fmt.Errorf("reseal: read signing secrets: %w", err)
		}
		got, err := pgx.CollectRows(rows, func(rw pgx.CollectableRow) (row, error) {
			var x row
			return x, rw.Scan(&x.endpointID, &x.id, &x.sealed)
		})
		if err != nil {
			return fmt.Errorf("reseal: read signing secrets: %w", err)
		}
		for _, x := range got {
			what := fmt.Sprintf("endpoint %s signing secret %s", x.endpointID, x.id)
			if err := r.resealRow(ctx, what, x.sealed, secretbox.AAD(x.endpointID, x.id), &r.rep.SigningSecrets,
				r.swapSecret(x.endpointID, x.id), r.rereadSecret(x.endpointID, x.id)); err != nil {
				return err
			}
		}
		r.report()
		if len(got) < r.batch {
			return nil
		}
		afterEndpoint, afterID = got[len(got)-1].endpointID, got[len(got)-1].id
	}
}

// swapSecret writes a signing secret's new value where the row still holds the old one.
func (r *resealer) swapSecret(endpointID, id string) swap {
	return func(ctx context.Context, sealed, old []byte) (bool, error) {
		tag, err := r.pool.Exec(ctx, `UPDATE endpoint_secret SET secret_ciphertext = $3
			WHERE endpoint_id = $1 AND id = $2 AND secret_ciphertext = $4`, endpointID, id, sealed, old)
		return tag.RowsAffected() == 1, err
	}
}

// rereadSecret reads a signing secret's current value.
func (r *resealer) rereadSecret(endpointID, id string) reread {
	return func(ctx context.Context) ([]byte, bool, error) {
		var v []byte
		err := r.pool.QueryRow(ctx, `SELECT secret_ciphertext FROM endpoint_secret WHERE endpoint_id = $1 AND id = $2`,
			endpointID, id).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, false, nil
		}
		return v, err == nil, err
	}
}

// sealedOption is where a secret sits in endpoint.request_options, and its AAD.
type sealedOption struct {
	object, field, name string
	aad                 func(endpointID string) []byte
}

var sealedOptions = []sealedOption{
	{"auth", "secret_ciphertext", "authentication secret", records.AuthAAD},
	{"client_certificate", "key_ciphertext", "client certificate key", records.ClientKeyAAD},
}

// requestOptions reseals the secrets in endpoint.request_options. The column is read and
// written as a whole JSON document, changing only the sealed fields and keeping every other
// byte of meaning, and the write compares the whole document with the one read.
func (r *resealer) requestOptions(ctx context.Context) error {
	after := ""
	for {
		type row struct {
			id   string
			opts []byte
		}
		rows, err := r.pool.Query(ctx, `SELECT id, request_options::text FROM endpoint WHERE id > $1
			AND (request_options ? 'auth' OR request_options ? 'client_certificate') ORDER BY id LIMIT $2`, after, r.batch)
		if err != nil {
			return fmt.Errorf("reseal: read request options: %w", err)
		}
		got, err := pgx.CollectRows(rows, func(rw pgx.CollectableRow) (row, error) {
			var x row
			return x, rw.Scan(&x.id, &x.opts)
		})
		if err != nil {
			return fmt.Errorf("reseal: read request options: %w", err)
		}
		for _, x := range got {
			if err := r.endpointOptions(ctx, x.id, x.opts); err != nil {
				return err
			}
		}
		r.report()
		if len(got) < r.batch {
			return nil
		}
		after = got[len(got)-1].id
	}
}

// endpointOptions reseals the secrets of one endpoint's request options, rereading the row
// whenever the API changed it in between.
func (r *resealer) endpointOptions(ctx context.Context, id string, opts []byte) error {
	for {
		doc, counts, err := r.resealOptions(id, opts)
		if err != nil {
			return err
		}
		if doc == nil { // nothing to change
			r.rep.RequestOptions.Current += counts.Current
			return nil
		}
		tag, err := r.pool.Exec(ctx, `UPDATE endpoint SET request_options = $2::jsonb WHERE id = $1 AND request_options = $3::jsonb`,
			id, doc, opts)
		if err != nil {
			return fmt.Errorf("reseal: endpoint %s request options: %w", id, err)
		}
		if tag.RowsAffected() == 1 {
			r.rep.RequestOptions.Resealed += counts.Resealed
			r.rep.RequestOptions.Current += counts.Current
			return nil
		}
		err = r.pool.QueryRow(ctx, `SELECT request_options::text FROM endpoint WHERE id = $1`, id).Scan(&opts)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reseal: endpoint %s request options: reread: %w", id, err)
		}
	}
}

// resealOptions returns the request options document opts with its secrets resealed, or nil
// when none changed, and the counts. A secret that does not open is noted in Unopened and left.
func (r *resealer) resealOptions(id string, opts []byte) ([]byte, ResealCount, error) {
	var counts ResealCount
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(opts, &doc); err != nil {
		return nil, counts, fmt.Errorf("reseal: endpoint %s request options are no JSON object: %w", id, err)
	}
	changed := false
	for _, o := range sealedOptions {
		var obj map[string]json.RawMessage
		if raw, ok := doc[o.object]; !ok || json.Unmarshal(raw, &obj) != nil || obj == nil {
			continue
		}
		var sealed []byte
		if err := json.Unmarshal(obj[o.field], &sealed); err != nil || len(sealed) == 0 {
			continue
		}
		out, did, err := r.keys.Reseal(sealed, o.aad(id))
		if err != nil {
			r.rep.Unopened = append(r.rep.Unopened, fmt.Sprintf("endpoint %s %s: %v", id, o.name, err))
			continue
		}
		if !did {
			counts.Current++
			continue
		}
		counts.Resealed++
		obj[o.field], _ = json.Marshal(out)
		doc[o.object], _ = json.Marshal(obj)
		changed = true
	}
	if !changed {
		return nil, counts, nil
	}
	b, err := json.Marshal(doc)
	return b, counts, err
}

func (r *resealer) idempotentAnswers(ctx context.Context) error {
	var afterScope, afterKey string
	for {
		type row struct {
			scope, key string
			sealed     []byte
		}
		rows, err := r.pool.Query(ctx, `SELECT scope, key, response FROM idempotency_key
			WHERE response IS NOT NULL AND (scope, key) > ($1, $2) ORDER BY scope, key LIMIT $3`, afterScope, afterKey, r.batch)
		if err != nil {
			return fmt.Errorf("reseal: read idempotent answers: %w", err)
		}
		got, err := pgx.CollectRows(rows, func(rw pgx.CollectableRow) (row, error) {
			var x row
			return x, rw.Scan(&x.scope, &x.key, &x.sealed)
		})
		if err != nil {
			return fmt.Errorf("reseal: read idempotent answers: %w", err)
		}
		for _, x := range got {
			// The scope names the caller (an API key's id), the key is the client's: neither is secret.
			what := fmt.Sprintf("idempotent answer of %s key %q", x.scope, x.key)
			write := func(ctx context.Context, sealed, old []byte) (bool, error) {
				tag, err := r.pool.Exec(ctx, `UPDATE idempotency_key SET response = $3 WHERE scope = $1 AND key = $2 AND response = $4`,
					x.scope, x.key, sealed, old)
				return tag.RowsAffected() == 1, err
			}
			read := func(ctx context.Context) ([]byte, bool, error) {
				var v []byte
				err := r.pool.QueryRow(ctx, `SELECT response FROM idempotency_key WHERE scope = $1 AND key = $2 AND response IS NOT NULL`,
					x.scope, x.key).Scan(&v)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil, false, nil
				}
				return v, err == nil, err
			}
			if err := r.resealRow(ctx, what, x.sealed, idempotencyAAD(x.scope, x.key), &r.rep.IdempotentAnswers, write, read); err != nil {
				return err
			}
		}
		r.report()
		if len(got) < r.batch {
			return nil
		}
		afterScope, afterKey = got[len(got)-1].scope, got[len(got)-1].key
	}
}
