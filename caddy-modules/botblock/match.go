package botblock

import (
	"errors"
	"fmt"
)

// rule is one pattern and the category it belongs to (for logs and
// counters).
type rule struct {
	Pattern  string // as written (lowercase, with ^ / $ anchors)
	Category string
}

// automaton is an Aho-Corasick matcher over ASCII bytes, compiled once, that
// finds whether any of its patterns occurs in a text, case-insensitively,
// without allocating. A pattern may start with ^ (match only at the start of
// the text) and end with $ (only at the end): the text is matched as if a
// start symbol came before it and an end symbol after it.
//
// Transitions are a dense table over byte classes: every byte that occurs
// in some pattern has its own class (upper and lower case letters share one),
// all other bytes share class 0, and the two anchors have one class each.
// Matching costs one table lookup per byte.
type automaton struct {
	class    [256]uint8
	ncls     int
	startCls uint8
	endCls   uint8
	anyStart bool // some pattern starts with ^
	anyEnd   bool // some pattern ends with $
	// delta[row+class] is the next state as its row offset (state number
	// times ncls), with matchFlag set if a rule matches on reaching it.
	delta []uint32
	out   []int32 // per state number: index of a rule matched on reaching it, or -1
	rules []rule
}

const matchFlag = 1 << 31

// maxStates bounds an automaton (total pattern length); config validation
// keeps custom lists well below it.
const maxStates = 1 << 20

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// checkPattern validates one pattern: printable ASCII, not empty.
func checkPattern(p string) error {
	body := p
	if len(body) > 0 && body[0] == '^' {
		body = body[1:]
	}
	if len(body) > 0 && body[len(body)-1] == '$' {
		body = body[:len(body)-1]
	}
	if body == "" {
		return errors.New("empty pattern")
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] > 0x7e {
			return fmt.Errorf("byte 0x%02x: only printable ASCII is allowed", p[i])
		}
	}
	return nil
}

// compile builds the automaton. Patterns are lowercased.
func compile(rules []rule) (*automaton, error) {
	a := &automaton{rules: make([]rule, len(rules))}
	type sym = uint8
	seqs := make([][]sym, len(rules))

	// byte classes
	var used [256]bool
	for _, r := range rules {
		if err := checkPattern(r.Pattern); err != nil {
			return nil, fmt.Errorf("pattern %q: %v", r.Pattern, err)
		}
		p := r.Pattern
		if p[0] == '^' {
			p = p[1:]
		}
		if p != "" && p[len(p)-1] == '$' {
			p = p[:len(p)-1]
		}
		for j := 0; j < len(p); j++ {
			used[lowerASCII(p[j])] = true
		}
	}
	next := 1
	for c := 0; c < 256; c++ {
		if used[c] {
			a.class[c] = uint8(next)
			next++
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		a.class[c] = a.class[c+'a'-'A']
	}
	a.startCls, a.endCls = uint8(next), uint8(next+1)
	a.ncls = next + 2

	for i, r := range rules {
		p := r.Pattern
		var seq []sym
		if p[0] == '^' {
			seq = append(seq, a.startCls)
			p = p[1:]
			a.anyStart = true
		}
		end := false
		if p != "" && p[len(p)-1] == '$' {
			end = true
			p = p[:len(p)-1]
		}
		for j := 0; j < len(p); j++ {
			seq = append(seq, a.class[p[j]])
		}
		if end {
			seq = append(seq, a.endCls)
			a.anyEnd = true
		}
		seqs[i] = seq
		a.rules[i] = rule{Pattern: lowerString(r.Pattern), Category: r.Category}
	}

	// trie, with 0 meaning "no edge" while building (state 0 is the root,
	// never a target of a trie edge)
	ncls := a.ncls
	a.delta = make([]uint32, ncls, ncls*64)
	a.out = []int32{-1}
	for i, seq := range seqs {
		s := uint32(0)
		for _, c := range seq {
			nx := a.delta[int(s)*ncls+int(c)]
			if nx == 0 {
				if len(a.out) >= maxStates {
					return nil, fmt.Errorf("patterns too long (more than %d states)", maxStates)
				}
				nx = uint32(len(a.out))
				a.delta = append(a.delta, make([]uint32, ncls)...)
				a.out = append(a.out, -1)
				a.delta[int(s)*ncls+int(c)] = nx
			}
			s = nx
		}
		if a.out[s] < 0 {
			a.out[s] = int32(i)
		}
	}

	// breadth-first: failure links turn the trie into a full transition
	// table; outputs are inherited along failure links
	fail := make([]uint32, len(a.out))
	queue := make([]uint32, 0, len(a.out))
	for c := 0; c < ncls; c++ {
		if nx := a.delta[c]; nx != 0 {
			fail[nx] = 0
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if a.out[s] < 0 {
			a.out[s] = a.out[fail[s]]
		}
		for c := 0; c < ncls; c++ {
			i := int(s)*ncls + c
			if nx := a.delta[i]; nx != 0 {
				fail[nx] = a.delta[int(fail[s])*ncls+c]
				queue = append(queue, nx)
			} else {
				a.delta[i] = a.delta[int(fail[s])*ncls+c]
			}
		}
	}
	// state numbers -> row offsets with the match flag, so that matching
	// needs no multiplication and no second lookup per byte
	if uint64(len(a.out))*uint64(ncls) >= matchFlag {
		return nil, errors.New("patterns too long")
	}
	for i, nx := range a.delta {
		v := nx * uint32(ncls)
		if a.out[nx] >= 0 {
			v |= matchFlag
		}
		a.delta[i] = v
	}
	return a, nil
}

// match returns the rule of a pattern found in text (the first to complete,
// scanning left to right), or nil.
func (a *automaton) match(text string) *rule {
	if a == nil || len(a.rules) == 0 {
		return nil
	}
	delta := a.delta
	class := &a.class
	s := uint32(0)
	if a.anyStart {
		if s = delta[a.startCls]; s&matchFlag != 0 {
			return a.found(s)
		}
	}
	for i := 0; i < len(text); i++ {
		if s = delta[s+uint32(class[text[i]])]; s&matchFlag != 0 {
			return a.found(s)
		}
	}
	if a.anyEnd {
		if s = delta[s+uint32(a.endCls)]; s&matchFlag != 0 {
			return a.found(s)
		}
	}
	return nil
}

func (a *automaton) found(s uint32) *rule {
	return &a.rules[a.out[(s&^matchFlag)/uint32(a.ncls)]]
}

// states returns the number of states (for tests and sizing).
func (a *automaton) states() int { return len(a.out) }

func lowerString(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lowerASCII(b[i])
	}
	return string(b)
}
