package pgstorage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/jackc/pgx/v5"
)

func TestStoreLoadStatDelete(t *testing.T) {
	ctx := context.Background()
	b := open(t, newTable(t), 0)

	if _, err := b.Load(ctx, "certificates/x/x.crt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a missing key: %v, want fs.ErrNotExist", err)
	}
	if _, err := b.Stat(ctx, "certificates"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a missing key: %v, want fs.ErrNotExist", err)
	}
	if b.Exists(ctx, "certificates") {
		t.Fatal("Exists on an empty storage")
	}
	before := time.Now().Add(-time.Minute)
	must(t, b.Store(ctx, "certificates/a/a.crt", []byte("one")))
	must(t, b.Store(ctx, "certificates/a/a.crt", []byte("cert A")))
	must(t, b.Store(ctx, "certificates/a/a.key", []byte("key A")))
	must(t, b.Store(ctx, "certificates/ab/ab.crt", []byte("cert AB")))
	must(t, b.Store(ctx, "acme/account.json", []byte{}))

	got, err := b.Load(ctx, "certificates/a/a.crt")
	if err != nil || string(got) != "cert A" {
		t.Fatalf("Load after overwrite: %q %v", got, err)
	}
	if got, err := b.Load(ctx, "acme/account.json"); err != nil || len(got) != 0 {
		t.Fatalf("Load of an empty value: %q %v", got, err)
	}
	for key, want := range map[string]bool{
		"certificates": true, "certificates/a": true, "certificates/a/a.crt": true, "/certificates/a/": true,
		"certificates/a/a": false, "certificates/a/a.crt/x": false, "cert": false, "": true,
	} {
		if b.Exists(ctx, key) != want {
			t.Errorf("Exists(%q) = %v, want %v", key, !want, want)
		}
	}

	fi, err := b.Stat(ctx, "certificates/a/a.crt")
	if err != nil || !fi.IsTerminal || fi.Size != int64(len("cert A")) || fi.Key != "certificates/a/a.crt" || fi.Modified.Before(before) {
		t.Fatalf("Stat of a key: %+v %v", fi, err)
	}
	di, err := b.Stat(ctx, "certificates/a")
	if err != nil || di.IsTerminal || di.Key != "certificates/a" || di.Modified.Before(before) {
		t.Fatalf("Stat of a directory: %+v %v", di, err)
	}

	// Delete is recursive and component-wise: "certificates/a" takes
	// certificates/a/* and not certificates/ab/*.
	must(t, b.Delete(ctx, "certificates/a"))
	if b.Exists(ctx, "certificates/a") || b.Exists(ctx, "certificates/a/a.key") {
		t.Fatal("certificates/a survived its Delete")
	}
	if got, err := b.Load(ctx, "certificates/ab/ab.crt"); err != nil || string(got) != "cert AB" {
		t.Fatalf("a sibling with the same leading letters was deleted: %q %v", got, err)
	}
	must(t, b.Delete(ctx, "certificates/a"))         // missing: no error
	must(t, b.Delete(ctx, "certificates/ab/ab.crt")) // one key
	if b.Exists(ctx, "certificates") {
		t.Fatal("an emptied directory still exists")
	}
	if err := b.Delete(ctx, "/"); err == nil {
		t.Fatal("Delete of the root was accepted")
	}
	if !b.Exists(ctx, "acme/account.json") {
		t.Fatal("the refused root Delete removed keys")
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	b := open(t, newTable(t), 0)
	for _, k := range []string{"c/i/d1/d1.crt", "c/i/d1/d1.key", "c/i/d2/d2.crt", "c/j/x/y/z.json", "c/top", "cc/other"} {
		must(t, b.Store(ctx, k, []byte(k)))
	}
	cases := []struct {
		prefix    string
		recursive bool
		want      []string
	}{
		{"c", false, []string{"c/i", "c/j", "c/top"}},
		{"c/i", false, []string{"c/i/d1", "c/i/d2"}},
		{"c/i/d1", false, []string{"c/i/d1/d1.crt", "c/i/d1/d1.key"}},
		{"c", true, []string{"c/i", "c/i/d1", "c/i/d1/d1.crt", "c/i/d1/d1.key", "c/i/d2", "c/i/d2/d2.crt", "c/j", "c/j/x", "c/j/x/y", "c/j/x/y/z.json", "c/top"}},
		{"", false, []string{"c", "cc"}},
		{"c/top", false, nil}, // a key has no children
	}
	for _, c := range cases {
		got, err := b.List(ctx, c.prefix, c.recursive)
		if err != nil {
			t.Fatalf("List(%q, %v): %v", c.prefix, c.recursive, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("List(%q, %v) = %v, want %v", c.prefix, c.recursive, got, c.want)
		}
	}
	if _, err := b.List(ctx, "c/none", true); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("List of a missing prefix: %v, want fs.ErrNotExist", err)
	}
}

func TestConcurrentStoreLoad(t *testing.T) {
	ctx := context.Background()
	table := newTable(t)
	a, b := open(t, table, 0), open(t, table, 0) // two pools, as two nodes
	values := [][]byte{bytes.Repeat([]byte("a"), 3000), bytes.Repeat([]byte("b"), 5000)}
	must(t, a.Store(ctx, "shared", values[0]))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		s := []*Backend{a, b}[w%2]
		wg.Go(func() {
			for i := range 25 {
				own := fmt.Sprintf("own/%d/%d", w, i)
				if err := s.Store(ctx, own, []byte(own)); err != nil {
					errs <- err
					return
				}
				if err := s.Store(ctx, "shared", values[(w+i)%2]); err != nil {
					errs <- err
					return
				}
				got, err := s.Load(ctx, "shared")
				if err != nil || !(bytes.Equal(got, values[0]) || bytes.Equal(got, values[1])) {
					errs <- fmt.Errorf("Load(shared) gave %d bytes (not one whole value): %v", len(got), err)
					return
				}
				if got, err := s.Load(ctx, own); err != nil || string(got) != own {
					errs <- fmt.Errorf("Load(%s) = %q %v", own, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	keys, err := b.List(ctx, "own", true)
	if err != nil || len(keys) != 8+8*25 {
		t.Fatalf("List(own, recursive): %d keys, %v; want %d", len(keys), err, 8+8*25)
	}
}

// lockExpiry reads a lock row's expiry and the database's clock.
func lockExpiry(t *testing.T, b *Backend, name string) (expires, now time.Time) {
	t.Helper()
	err := b.pool.QueryRow(context.Background(), `SELECT expires_at, clock_timestamp() FROM `+b.locks+` WHERE name = $1`, name).Scan(&expires, &now)
	if err != nil {
		t.Fatal(err)
	}
	return expires, now
}

func TestLockContention(t *testing.T) {
	ctx := context.Background()
	table := newTable(t)
	const ttl = 900 * time.Millisecond
	a, b := open(t, table, ttl), open(t, table, ttl)

	must(t, a.Lock(ctx, "issue_cert_example.com"))
	firstExpiry, _ := lockExpiry(t, a, "issue_cert_example.com")
	if ok, err := b.TryLock(ctx, "issue_cert_example.com"); ok || err != nil {
		t.Fatalf("TryLock of a held lock: %v %v", ok, err)
	}
	if ok, err := a.TryLock(ctx, "issue_cert_example.com"); ok || err != nil {
		t.Fatalf("TryLock by the holder itself: %v %v", ok, err)
	}
	// Another name is independent.
	must(t, b.Lock(ctx, "issue_cert_other.org"))
	must(t, b.Unlock(ctx, "issue_cert_other.org"))

	got := make(chan error, 1)
	go func() { got <- b.Lock(ctx, "issue_cert_example.com") }()

	// While a holds it, a's refresh keeps the lock past its first expiry,
	// and b keeps waiting.
	for {
		exp, now := lockExpiry(t, a, "issue_cert_example.com")
		if now.After(firstExpiry.Add(ttl / 2)) {
			if !exp.After(now) {
				t.Fatalf("the held lock was not refreshed: expires %v, now %v", exp, now)
			}
			break
		}
		select {
		case err := <-got:
			t.Fatalf("b took a held lock: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	select {
	case err := <-got:
		t.Fatalf("b took a held lock past its first expiry: %v", err)
	default:
	}

	released := time.Now()
	must(t, a.Unlock(ctx, "issue_cert_example.com"))
	select {
	case err := <-got:
		must(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("b did not get the lock after a's Unlock")
	}
	if waited := time.Since(released); waited > b.pollInterval()+time.Second {
		t.Errorf("b got the lock %v after the Unlock (poll interval %v)", waited, b.pollInterval())
	}
	if err := a.Unlock(ctx, "issue_cert_example.com"); err == nil {
		t.Fatal("a second Unlock by a (not the holder) succeeded")
	}
	if ok, _ := a.TryLock(ctx, "issue_cert_example.com"); ok {
		t.Fatal("a's stray Unlock released b's lock")
	}
	must(t, b.Unlock(ctx, "issue_cert_example.com"))
}

func TestLockHonoursContext(t *testing.T) {
	table := newTable(t)
	a, b := open(t, table, 0), open(t, table, 0)
	must(t, a.Lock(context.Background(), "l"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := b.Lock(ctx, "l"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with an ending context: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Lock returned %v after its context ended", d)
	}
}

// A lock that expired (its holder stopped refreshing) is taken over, and the
// old holder's Unlock does not release the new holder's lock.
func TestUnlockOnlyOwnLock(t *testing.T) {
	ctx := context.Background()
	table := newTable(t)
	a, b := open(t, table, 0), open(t, table, 0)
	must(t, a.Lock(ctx, "l"))
	// a's holding ends as if a had stalled past the TTL.
	if _, err := a.pool.Exec(ctx, `UPDATE `+a.locks+` SET expires_at = clock_timestamp() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryLock(ctx, "l"); !ok || err != nil {
		t.Fatalf("TryLock of an expired lock: %v %v", ok, err)
	}
	if err := a.Unlock(ctx, "l"); err == nil {
		t.Fatal("a's Unlock of a lock taken over reported success")
	}
	if ok, _ := a.TryLock(ctx, "l"); ok {
		t.Fatal("a's Unlock released b's lock")
	}
	must(t, b.RenewLockLease(ctx, "l", time.Minute))
	if exp, now := lockExpiry(t, b, "l"); exp.Sub(now) < 50*time.Second {
		t.Fatalf("RenewLockLease(1m) left %v", exp.Sub(now))
	}
	must(t, b.Unlock(ctx, "l"))
	if err := b.RenewLockLease(ctx, "l", time.Minute); err == nil {
		t.Fatal("RenewLockLease of a released lock succeeded")
	}
}

// A holder in another process that dies without Unlock (SIGKILL) loses the
// lock once it expires: the waiter gets it within the TTL (plus one poll).
func TestCrashedHolderIsTakenOver(t *testing.T) {
	table := newTable(t)
	const ttl = 1500 * time.Millisecond
	child := startLockChild(t, table, "issue_cert_crash.example", ttl)
	b := open(t, table, ttl)
	if ok, err := b.TryLock(context.Background(), "issue_cert_crash.example"); ok || err != nil {
		t.Fatalf("TryLock while the other process holds it: %v %v", ok, err)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(t, b.Lock(ctx, "issue_cert_crash.example"))
	if d := time.Since(killed); d > ttl+b.pollInterval()+time.Second {
		t.Fatalf("took over %v after the holder died (ttl %v)", d, ttl)
	}
	must(t, b.Unlock(context.Background(), "issue_cert_crash.example"))
}

func TestModule(t *testing.T) {
	table := newTable(t)
	t.Setenv("PGS_TEST_DSN", testDSN(t))
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	load := func(cfg map[string]any) (*Storage, error) {
		raw, _ := json.Marshal(cfg)
		m, err := ctx.LoadModuleByID("caddy.storage.gatehouse_postgres", raw)
		if err != nil {
			return nil, err
		}
		return m.(*Storage), nil
	}
	s1, err := load(map[string]any{"dsn": "{env.PGS_TEST_DSN}", "table": table, "lock_ttl": "5s"})
	must(t, err)
	s2, err := load(map[string]any{"dsn": "{env.PGS_TEST_DSN}", "table": table, "lock_ttl": "5s"})
	must(t, err)
	st1, _ := s1.CertMagicStorage()
	st2, _ := s2.CertMagicStorage()
	if st1 != st2 {
		t.Fatal("two loads of one config did not share the backend")
	}
	must(t, st1.Store(context.Background(), "k", []byte("v")))
	must(t, s1.Cleanup())
	if v, err := st2.Load(context.Background(), "k"); err != nil || string(v) != "v" {
		t.Fatalf("the backend closed while another config used it: %q %v", v, err)
	}
	must(t, s2.Cleanup())

	for _, bad := range []map[string]any{
		{},
		{"dsn": "{env.PGS_TEST_UNSET_VARIABLE}"},
		{"dsn": "{env.PGS_TEST_DSN}", "table": "Bad-Name"},
		{"dsn": "{env.PGS_TEST_DSN}", "lock_ttl": "10ms"},
	} {
		if _, err := load(bad); err == nil {
			t.Errorf("config %v was accepted", bad)
		}
	}
	_, err = load(map[string]any{"dsn": "postgres://u:s3cret-pw@127.0.0.1:1/x?sslmode=bogus"})
	if err == nil || bytes.Contains([]byte(err.Error()), []byte("s3cret-pw")) {
		t.Fatalf("a bad dsn: %v (must fail without quoting the password)", err)
	}
}

// The tables are created once even when several nodes start at once.
func TestSchemaCreatedConcurrently(t *testing.T) {
	table := newTable(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		b := open(t, table, 0)
		wg.Go(func() { errs <- b.Store(context.Background(), fmt.Sprintf("k%d", i), []byte("v")) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	conn, err := pgx.Connect(context.Background(), testDSN(t))
	must(t, err)
	defer conn.Close(context.Background())
	var n int
	must(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n))
	if n != 4 {
		t.Fatalf("%d keys, want 4", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
