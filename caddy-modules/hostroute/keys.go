package hostroute

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// maxHostLen is the longest host name (without port and trailing dot) that can
// be configured or matched (RFC 1035: 253 characters in text form).
const maxHostLen = 253

// maxReportedKeyErrors caps how many invalid host keys one error names.
const maxReportedKeyErrors = 10

// hostKey is one configured key: as written, normalized (for a wildcard, the
// part after "*."), and whether it is a wildcard.
type hostKey struct {
	raw  string
	norm string
	wild bool
	host *Host
}

// checkKeys normalizes every key of hosts and returns them sorted by key, or
// an error naming every invalid, null or duplicate key (up to a cap).
func checkKeys(hosts map[string]*Host) ([]hostKey, error) {
	keys := make([]hostKey, 0, len(hosts))
	for raw, host := range hosts {
		keys = append(keys, hostKey{raw: raw, host: host})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].raw < keys[j].raw })

	seen := make(map[string]string, len(keys)) // normalized key ("*."-prefixed for wildcards) -> raw
	var errs []error
	for i := range keys {
		k := &keys[i]
		if k.host == nil {
			errs = append(errs, fmt.Errorf("host %q: configuration is null (use {} for a host that answers 404)", k.raw))
			continue
		}
		var err error
		k.norm, k.wild, err = normalizeKey(k.raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("host %q: %v", k.raw, err))
			continue
		}
		full := k.norm
		if k.wild {
			full = "*." + k.norm
		}
		if other, dup := seen[full]; dup {
			errs = append(errs, fmt.Errorf("hosts %q and %q are the same host %q (keys are case-insensitive and a trailing dot is ignored)", other, k.raw, full))
			continue
		}
		seen[full] = k.raw
	}
	if len(errs) > maxReportedKeyErrors {
		more := len(errs) - maxReportedKeyErrors
		errs = append(errs[:maxReportedKeyErrors], fmt.Errorf("and %d more invalid host keys", more))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid hosts: %w", errors.Join(errs...))
	}
	return keys, nil
}

// normalizeKey turns a configured host key into its lookup form: lowercase,
// no trailing dot, IP addresses in canonical form without brackets. For a
// wildcard key ("*.example.com") it returns the part after "*." and true.
func normalizeKey(raw string) (string, bool, error) {
	if raw == "" {
		return "", false, errors.New("empty host name")
	}
	s := strings.ToLower(raw)

	// IP literals: "192.0.2.1", "2001:db8::1", "[2001:db8::1]".
	ipText := s
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		ipText = s[1 : len(s)-1]
	}
	if addr, err := netip.ParseAddr(ipText); err == nil {
		if addr.Zone() != "" {
			return "", false, errors.New("IPv6 zones are not supported")
		}
		return addr.String(), false, nil
	}

	switch {
	case strings.Contains(s, "://"):
		return "", false, errors.New("must be a bare host name, not a URL")
	case strings.ContainsAny(s, "/?#@"):
		return "", false, errors.New("must be a bare host name without path, query or user info")
	case strings.Contains(s, ":") || strings.HasPrefix(s, "["):
		return "", false, errors.New("must not include a port (ports are ignored when matching)")
	}

	s = strings.TrimSuffix(s, ".")
	if s == "*" || s == "" {
		return "", false, errors.New(`not a host name (use "fallback" for a catch-all)`)
	}
	if len(s) > maxHostLen {
		return "", false, fmt.Errorf("longer than %d characters", maxHostLen)
	}
	isWild := strings.HasPrefix(s, "*.")
	if isWild {
		s = s[2:]
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" {
			return "", false, errors.New("empty label (two dots in a row, or a leading dot)")
		}
		if len(label) > 63 {
			return "", false, errors.New("a label is longer than 63 characters")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
			case c == '*':
				return "", false, errors.New(`a wildcard is only allowed as the whole first label, as in "*.example.com"`)
			case c >= 0x80:
				return "", false, errors.New("non-ASCII host name: use its ASCII (punycode, xn--) form")
			default:
				return "", false, fmt.Errorf("invalid character %q", c)
			}
		}
	}
	return s, isWild, nil
}
