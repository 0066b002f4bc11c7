package botblock

import (
	_ "embed"
	"fmt"
	"strings"
)

// The shipped lists (read-only; parsed and compiled at provision time).
var (
	//go:embed lists/user_agents.txt
	userAgentsList string
	//go:embed lists/paths.txt
	pathsList string
)

// Categories: the built-in ones name the sections of the shipped lists.
const (
	CatScanner         = "scanner"
	CatAICrawler       = "ai_crawler"
	CatScraper         = "scraper"
	CatCustomUserAgent = "custom_user_agent"
	CatEmptyUserAgent  = "empty_user_agent"
	CatExploitPath     = "exploit_path"
	CatTraversal       = "traversal"
	CatQuery           = "query"
	CatWordPressPath   = "wordpress_path"
	CatCustomPath      = "custom_path"
)

// userAgentCategories are the built-in user-agent categories, the default
// of the categories option.
var userAgentCategories = [...]string{CatScanner, CatAICrawler, CatScraper}

// allCategories index the per-route counters.
var allCategories = [...]string{
	CatScanner, CatAICrawler, CatScraper, CatCustomUserAgent, CatEmptyUserAgent,
	CatExploitPath, CatTraversal, CatQuery, CatWordPressPath, CatCustomPath,
}

func categoryIndex(c string) int {
	for i, x := range allCategories {
		if x == c {
			return i
		}
	}
	return -1
}

// parseList reads a shipped list: "[section]" lines, patterns, comments.
func parseList(text string) (map[string][]string, error) {
	out := map[string][]string{}
	section := ""
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			continue
		}
		if section == "" {
			return nil, fmt.Errorf("line %d: pattern outside a [section]", n+1)
		}
		if err := checkPattern(line); err != nil {
			return nil, fmt.Errorf("line %d %q: %v", n+1, line, err)
		}
		out[section] = append(out[section], lowerString(line))
	}
	return out, nil
}

// builtin returns the shipped patterns of the given sections as rules.
func builtin(text string, sections ...string) ([]rule, error) {
	lists, err := parseList(text)
	if err != nil {
		return nil, err
	}
	var rules []rule
	for _, s := range sections {
		pats, ok := lists[s]
		if !ok {
			return nil, fmt.Errorf("no section [%s] in the shipped list", s)
		}
		for _, p := range pats {
			rules = append(rules, rule{Pattern: p, Category: s})
		}
	}
	return rules, nil
}
