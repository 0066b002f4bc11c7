package botblock

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// naive is the reference: does any pattern occur (case-insensitively, with
// ^ and $ anchors) in text?
func naive(patterns []string, text string) bool {
	t := "\x01" + strings.ToLower(text) + "\x02"
	for _, p := range patterns {
		q := strings.ToLower(p)
		if strings.HasPrefix(q, "^") {
			q = "\x01" + q[1:]
		}
		if strings.HasSuffix(q, "$") {
			q = q[:len(q)-1] + "\x02"
		}
		if strings.Contains(t, q) {
			return true
		}
	}
	return false
}

func TestAutomatonAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "abcAB/.-x"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := range 300 {
		var pats []string
		for range 1 + rng.IntN(8) {
			p := word(1 + rng.IntN(4))
			switch rng.IntN(5) {
			case 0:
				p = "^" + p
			case 1:
				p += "$"
			case 2:
				p = "^" + p + "$"
			}
			pats = append(pats, p)
		}
		var rules []rule
		for _, p := range pats {
			rules = append(rules, rule{Pattern: p, Category: "c"})
		}
		a, err := compile(rules)
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			text := word(rng.IntN(12))
			if rng.IntN(10) == 0 {
				text += "\x00\x01é" // bytes that are in no pattern
			}
			got, want := a.match(text) != nil, naive(pats, text)
			if got != want {
				t.Fatalf("round %d: patterns %q text %q: automaton %v, naive %v", round, pats, text, got, want)
			}
		}
	}
}

func TestAutomatonReportsRule(t *testing.T) {
	a, err := compile([]rule{{"GPTBot", "ai"}, {"^curl/", "cli"}, {".php$", "php"}, {"bot", "generic"}})
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"Mozilla/5.0 (compatible; GPTBot/1.1)": "gptbot", // "bot" completes at the same byte; the longer wins
		"curl/8.5.0":                           "^curl/",
		"xcurl/8":                              "",
		"/index.PHP":                           ".php$",
		"/index.php/x":                         "",
		"robot":                                "bot",
		"":                                     "",
	} {
		m := a.match(text)
		got := ""
		if m != nil {
			got = m.Pattern
		}
		if got != want {
			t.Errorf("%q: matched %q, want %q", text, got, want)
		}
	}
	var nilA *automaton
	if nilA.match("anything") != nil {
		t.Fatal("nil automaton matched")
	}
}

func TestCheckPattern(t *testing.T) {
	for _, bad := range []string{"", "^", "$", "^$", "tab\there", "é", "nul\x00"} {
		if checkPattern(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, good := range []string{"a", "^a", "a$", "^a$", "${jndi:", "a^b", "a$b", "..\\"} {
		if err := checkPattern(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

func TestShippedLists(t *testing.T) {
	ua, err := parseList(userAgentsList)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range userAgentCategories {
		if len(ua[c]) < 10 {
			t.Errorf("category %s has %d patterns", c, len(ua[c]))
		}
	}
	paths, err := parseList(pathsList)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{CatExploitPath, CatTraversal, CatQuery, CatWordPressPath} {
		if len(paths[c]) == 0 {
			t.Errorf("no section %s", c)
		}
	}
	// generic clients must never be in the shipped list
	all, _ := builtin(userAgentsList, userAgentCategories[:]...)
	a, err := compile(all)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shipped user-agent automaton: %d patterns, %d states, %d classes, %d KiB",
		len(all), a.states(), a.ncls, a.states()*a.ncls*4/1024)
}
