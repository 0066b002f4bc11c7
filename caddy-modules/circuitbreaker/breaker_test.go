package circuitbreaker

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_700_000_000_000)

func newTestBreaker() (*breaker, *[]snapshot) {
	var changes []snapshot
	b := &breaker{}
	b.seed(0, 0)
	b.onChange = func(s snapshot) { changes = append(changes, s) }
	return b, &changes
}

var p3 = params{threshold: 3, timeout: 10 * time.Second}

// at is a clock stopped at t.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }

func mustAdmit(t *testing.T, b *breaker, now time.Time) ticket {
	t.Helper()
	tk, ok, ra := b.admit(at(now), p3)
	if !ok {
		t.Fatalf("admit at %v: rejected (retry after %d), state %+v", now.Sub(t0), ra, b.Snapshot())
	}
	return tk
}

func mustReject(t *testing.T, b *breaker, now time.Time, wantRetryAfter int) {
	t.Helper()
	_, ok, ra := b.admit(at(now), p3)
	if ok {
		t.Fatalf("admit at %v: let through, want rejected; state %+v", now.Sub(t0), b.Snapshot())
	}
	if ra != wantRetryAfter {
		t.Fatalf("admit at %v: Retry-After %d, want %d", now.Sub(t0), ra, wantRetryAfter)
	}
}

func wantState(t *testing.T, b *breaker, want snapshot) {
	t.Helper()
	if got := b.Snapshot(); got != want {
		t.Fatalf("state %+v, want %+v", got, want)
	}
}

func TestClosedCountsConsecutiveFailures(t *testing.T) {
	b, changes := newTestBreaker()
	for i := 1; i <= 2; i++ {
		b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
		wantState(t, b, snapshot{Closed, i, 0})
	}
	// a success resets the count: failures must be consecutive
	b.record(mustAdmit(t, b, t0), success, at(t0), p3)
	wantState(t, b, snapshot{Closed, 0, 0})
	// a success with count 0 changes nothing and reports nothing
	n := len(*changes)
	b.record(mustAdmit(t, b, t0), success, at(t0), p3)
	if len(*changes) != n {
		t.Fatalf("success at count 0 reported a change")
	}
	// neutral outcomes (client gave up) neither count nor reset
	b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	b.record(mustAdmit(t, b, t0), neutral, at(t0), p3)
	wantState(t, b, snapshot{Closed, 1, 0})
	b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	opened := t0.Add(1500 * time.Millisecond)
	b.record(mustAdmit(t, b, t0), failure, at(opened), p3)
	wantState(t, b, snapshot{Open, 3, opened.UnixMilli()})

	want := []snapshot{
		{Closed, 1, 0}, {Closed, 2, 0}, {Closed, 0, 0},
		{Closed, 1, 0}, {Closed, 2, 0}, {Open, 3, opened.UnixMilli()},
	}
	if len(*changes) != len(want) {
		t.Fatalf("changes %+v, want %+v", *changes, want)
	}
	for i := range want {
		if (*changes)[i] != want[i] {
			t.Fatalf("change %d: %+v, want %+v", i, (*changes)[i], want[i])
		}
	}
}

func TestOpenHalfOpenClosedCycle(t *testing.T) {
	b, changes := newTestBreaker()
	for range 3 {
		b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	}
	wantState(t, b, snapshot{Open, 3, t0.UnixMilli()})

	// open: rejected, Retry-After = whole seconds until half-open, rounded up
	mustReject(t, b, t0, 10)
	mustReject(t, b, t0.Add(1*time.Millisecond), 10)
	mustReject(t, b, t0.Add(999*time.Millisecond), 10)
	mustReject(t, b, t0.Add(1000*time.Millisecond), 9)
	mustReject(t, b, t0.Add(9999*time.Millisecond), 1)

	// timeout elapsed: exactly one trial goes through
	half := t0.Add(10 * time.Second)
	trial := mustAdmit(t, b, half)
	if !trial.trial {
		t.Fatal("first request after the timeout is not the trial")
	}
	wantState(t, b, snapshot{HalfOpen, 3, t0.UnixMilli()})
	mustReject(t, b, half, 1)
	mustReject(t, b, half.Add(time.Hour), 1)

	// the trial succeeds: closed, count 0
	b.record(trial, success, at(half), p3)
	wantState(t, b, snapshot{Closed, 0, 0})
	mustAdmit(t, b, half)

	states := []State{}
	for _, c := range *changes {
		states = append(states, c.State)
	}
	if got, want := states, []State{Closed, Closed, Open, HalfOpen, Closed}; !equalStates(got, want) {
		t.Fatalf("reported states %v, want %v", got, want)
	}
}

func TestTrialFailureReopens(t *testing.T) {
	b, _ := newTestBreaker()
	for range 3 {
		b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	}
	half := t0.Add(10 * time.Second)
	trial := mustAdmit(t, b, half)
	failedAt := half.Add(250 * time.Millisecond)
	b.record(trial, failure, at(failedAt), p3)
	wantState(t, b, snapshot{Open, 4, failedAt.UnixMilli()})
	// a new full timeout from the failed trial
	mustReject(t, b, half.Add(time.Second), 10)
	mustAdmit(t, b, failedAt.Add(10*time.Second))
}

func TestTrialNeutralReleasesSlot(t *testing.T) {
	b, changes := newTestBreaker()
	for range 3 {
		b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	}
	half := t0.Add(11 * time.Second)
	trial := mustAdmit(t, b, half)
	n := len(*changes)
	b.record(trial, neutral, at(half), p3)
	wantState(t, b, snapshot{HalfOpen, 3, t0.UnixMilli()})
	if len(*changes) != n {
		t.Fatal("a neutral trial reported a change")
	}
	second := mustAdmit(t, b, half)
	if !second.trial {
		t.Fatal("next request after a neutral trial is not a trial")
	}
	mustReject(t, b, half, 1)
	b.record(second, success, at(half), p3)
	wantState(t, b, snapshot{Closed, 0, 0})
}

// Outcomes of requests admitted before a transition do not count after it.
func TestStaleOutcomesIgnored(t *testing.T) {
	b, _ := newTestBreaker()
	inflight := []ticket{mustAdmit(t, b, t0), mustAdmit(t, b, t0), mustAdmit(t, b, t0)}
	for range 3 {
		b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	}
	wantState(t, b, snapshot{Open, 3, t0.UnixMilli()})
	// in-flight requests from the closed period finish while open
	b.record(inflight[0], success, at(t0), p3)
	b.record(inflight[1], failure, at(t0), p3)
	wantState(t, b, snapshot{Open, 3, t0.UnixMilli()})
	// and during half-open: only the trial decides
	half := t0.Add(10 * time.Second)
	trial := mustAdmit(t, b, half)
	b.record(inflight[2], success, at(half), p3)
	wantState(t, b, snapshot{HalfOpen, 3, t0.UnixMilli()})
	b.record(trial, success, at(half), p3)
	wantState(t, b, snapshot{Closed, 0, 0})
	// a trial ticket recorded twice changes nothing the second time
	b.record(trial, failure, at(half), p3)
	wantState(t, b, snapshot{Closed, 0, 0})
}

func TestSeed(t *testing.T) {
	b := &breaker{}
	b.seed(2, 0)
	wantState(t, b, snapshot{Closed, 2, 0})
	b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	wantState(t, b, snapshot{Open, 3, t0.UnixMilli()})

	// open since opened_at: the rest of the timeout still applies
	b = &breaker{}
	b.seed(5, t0.UnixMilli())
	wantState(t, b, snapshot{Open, 5, t0.UnixMilli()})
	mustReject(t, b, t0.Add(4*time.Second), 6)
	// long past the timeout: the next request is the trial
	if tk := mustAdmit(t, b, t0.Add(time.Hour)); !tk.trial {
		t.Fatal("not a trial")
	}

	// negative counts are clamped
	b = &breaker{}
	b.seed(-4, 0)
	wantState(t, b, snapshot{Closed, 0, 0})
}

func TestApplyReset(t *testing.T) {
	b, _ := newTestBreaker()
	for range 3 {
		b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	}
	old := mustAdmit(t, b, t0.Add(10*time.Second)) // a trial in flight
	if !b.applyReset(100, 0, 0) {
		t.Fatal("reset_at 100 > 0 not applied")
	}
	wantState(t, b, snapshot{Closed, 0, 0})
	// the trial from before the reset is stale
	b.record(old, failure, at(t0), p3)
	wantState(t, b, snapshot{Closed, 0, 0})
	// the same or an older reset_at is not applied again
	for range 3 {
		b.record(mustAdmit(t, b, t0), failure, at(t0), p3)
	}
	if b.applyReset(100, 0, 0) || b.applyReset(50, 0, 0) || b.applyReset(0, 0, 0) {
		t.Fatal("an old reset_at was applied")
	}
	wantState(t, b, snapshot{Open, 3, t0.UnixMilli()})
	if !b.applyReset(101, 0, 0) {
		t.Fatal("newer reset_at not applied")
	}
	wantState(t, b, snapshot{Closed, 0, 0})
}

func TestCeilSeconds(t *testing.T) {
	for ms, want := range map[int64]int{-5: 1, 0: 1, 1: 1, 999: 1, 1000: 1, 1001: 2, 29_999: 30, 30_000: 30} {
		if got := ceilSeconds(ms); got != want {
			t.Errorf("ceilSeconds(%d) = %d, want %d", ms, got, want)
		}
	}
}

// Many goroutines hammer a breaker while the clock moves; at no time may two
// half-open trials be in flight, and every transition must be a legal one.
func TestConcurrentSingleTrial(t *testing.T) {
	b := &breaker{}
	b.seed(0, 0)
	var mu sync.Mutex
	var last State = Closed
	var illegal []string
	b.onChange = func(s snapshot) { // called with b.mu held: serialized
		mu.Lock()
		defer mu.Unlock()
		ok := map[State][]State{
			Closed:   {Closed, Open},
			Open:     {HalfOpen},
			HalfOpen: {Closed, Open},
		}[last]
		if !containsState(ok, s.State) {
			illegal = append(illegal, string(last)+"->"+string(s.State))
		}
		last = s.State
	}
	var clock atomic.Int64
	clock.Store(t0.UnixMilli())
	p := params{threshold: 4, timeout: 50 * time.Millisecond}
	var trials, maxTrials, admitted, totalTrials atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				now := time.UnixMilli(clock.Add(1))
				tk, ok, _ := b.admit(at(now), p)
				if !ok {
					continue
				}
				admitted.Add(1)
				if tk.trial {
					totalTrials.Add(1)
					n := trials.Add(1)
					for {
						m := maxTrials.Load()
						if n <= m || maxTrials.CompareAndSwap(m, n) {
							break
						}
					}
				}
				o := failure // mostly failures, so that the breaker keeps cycling
				switch (g + i) % 5 {
				case 0:
					o = success
				case 1:
					o = neutral
				}
				if tk.trial {
					trials.Add(-1)
				}
				b.record(tk, o, at(now), p)
			}
		}()
	}
	wg.Wait()
	if maxTrials.Load() > 1 {
		t.Fatalf("%d trials in flight at once", maxTrials.Load())
	}
	if len(illegal) > 0 {
		t.Fatalf("illegal transitions: %v", illegal[:min(len(illegal), 10)])
	}
	if admitted.Load() == 0 || totalTrials.Load() == 0 {
		t.Fatalf("admitted %d, trials %d: the cycle was not exercised", admitted.Load(), totalTrials.Load())
	}
	t.Logf("admitted %d requests, %d half-open trials", admitted.Load(), totalTrials.Load())
}

func equalStates(a, b []State) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsState(list []State, s State) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func BenchmarkBreakerClosed(b *testing.B) {
	br := &breaker{}
	br.seed(0, 0)
	now := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tk, ok, _ := br.admit(at(now), p3)
			if ok {
				br.record(tk, success, at(now), p3)
			}
		}
	})
}
