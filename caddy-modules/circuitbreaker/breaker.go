package circuitbreaker

import (
	"sync"
	"time"
)

// State is the state of a breaker, as written in reports.
type State string

// Breaker states.
const (
	Closed   State = "closed"
	Open     State = "open"
	HalfOpen State = "half_open"
)

// outcome is what a request that was let through turned out to be.
type outcome uint8

const (
	// success: a response below 500 (or a 101 upgrade).
	success outcome = iota
	// failure: a 5xx response, or an error returned by the downstream chain
	// (for reverse_proxy: the upstream could not be reached, timed out,
	// broke the connection...), or a panic.
	failure
	// neutral: the client went away before an answer; says nothing about the
	// backend. A half-open trial that ends this way releases the trial slot.
	neutral
)

// ticket is handed to a request that was let through; the request gives it
// back with its outcome.
type ticket struct {
	trial bool
	gen   uint64
}

// params are a handler's configured parameters. They come from the current
// config (they may change on a reload while the state is kept).
type params struct {
	threshold int
	timeout   time.Duration
}

// snapshot is the externally visible state of a breaker (what is reported).
type snapshot struct {
	State        State
	FailureCount int
	OpenedAt     int64 // unix ms, 0 when not open
}

// breaker is the state machine of one route. It is safe for concurrent use.
// Methods take a clock (called only when the time matters: never on the
// closed-state path, as reading the clock is not free) so that tests can
// drive it.
//
//	closed    --threshold consecutive failures-->  open (opened_at = now)
//	open      --timeout elapsed, next request-->   half_open (that request is the trial)
//	half_open --trial succeeds-->                  closed (failure_count = 0)
//	half_open --trial fails-->                     open (opened_at = now)
//	half_open --trial client gave up-->            half_open (next request is the trial)
type breaker struct {
	mu       sync.Mutex
	state    State
	failures int
	openedAt int64 // unix ms
	trial    bool  // a half-open trial request is in flight
	// gen changes on every state transition; outcomes of ordinary requests
	// admitted under an earlier generation are ignored (they were in flight
	// while the breaker opened or was reset).
	gen uint64
	// resetAt is the largest config reset_at applied to this breaker.
	resetAt int64

	// onChange is called (with mu held) after every change of the visible
	// state; it must not block.
	onChange func(snapshot)
}

// seed sets the state from configured values: opened_at > 0 means open since
// then (already past the timeout: the next request is the trial); otherwise
// closed with failure_count consecutive failures so far.
func (b *breaker) seed(failureCount int, openedAt int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seedLocked(failureCount, openedAt)
}

func (b *breaker) seedLocked(failureCount int, openedAt int64) {
	if failureCount < 0 {
		failureCount = 0
	}
	b.failures = failureCount
	b.trial = false
	b.gen++
	if openedAt > 0 {
		b.state, b.openedAt = Open, openedAt
	} else {
		b.state, b.openedAt = Closed, 0
	}
}

// applyReset re-seeds the breaker from the config when the config carries a
// reset_at newer than any applied before. It reports whether it did.
func (b *breaker) applyReset(resetAt int64, failureCount int, openedAt int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if resetAt <= b.resetAt {
		return false
	}
	b.resetAt = resetAt
	b.seedLocked(failureCount, openedAt)
	return true
}

func (b *breaker) snapshotLocked() snapshot {
	return snapshot{State: b.state, FailureCount: b.failures, OpenedAt: b.openedAt}
}

func (b *breaker) changed() {
	if b.onChange != nil {
		b.onChange(b.snapshotLocked())
	}
}

// Snapshot returns the current state.
func (b *breaker) Snapshot() snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.snapshotLocked()
}

// admit decides whether a request may go to the backend. If not, it returns
// ok=false and how long the client should wait (whole seconds, at least 1).
func (b *breaker) admit(clock func() time.Time, p params) (t ticket, ok bool, retryAfter int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case Closed:
		return ticket{gen: b.gen}, true, 0
	case Open:
		nowMs := clock().UnixMilli()
		halfOpenAt := b.openedAt + p.timeout.Milliseconds()
		if nowMs < halfOpenAt {
			return ticket{}, false, ceilSeconds(halfOpenAt - nowMs)
		}
		b.state, b.trial = HalfOpen, true
		b.gen++
		b.changed()
		return ticket{trial: true, gen: b.gen}, true, 0
	default: // HalfOpen
		if b.trial {
			return ticket{}, false, 1
		}
		b.trial = true
		return ticket{trial: true, gen: b.gen}, true, 0
	}
}

// record takes the outcome of a request admitted with t.
func (b *breaker) record(t ticket, o outcome, clock func() time.Time, p params) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.gen != b.gen {
		return // admitted before a transition or a reset: stale
	}
	if t.trial {
		if b.state != HalfOpen || !b.trial {
			return
		}
		b.trial = false
		switch o {
		case success:
			b.state, b.failures, b.openedAt = Closed, 0, 0
		case failure:
			b.state, b.openedAt = Open, clock().UnixMilli()
			b.failures++
		default:
			return // stay half-open; the next request is the trial
		}
		b.gen++
		b.changed()
		return
	}
	if b.state != Closed {
		return
	}
	switch o {
	case success:
		if b.failures == 0 {
			return
		}
		b.failures = 0
	case failure:
		b.failures++
		if b.failures >= p.threshold {
			b.state, b.openedAt = Open, clock().UnixMilli()
			b.gen++
		}
	default:
		return
	}
	b.changed()
}

// ceilSeconds turns a positive number of milliseconds into whole seconds,
// rounded up, at least 1.
func ceilSeconds(ms int64) int {
	s := int((ms + 999) / 1000)
	if s < 1 {
		return 1
	}
	return s
}
