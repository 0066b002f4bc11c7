package hostroute

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// hostHash is the hash the admin API reports for a host: the lowercase hex
// SHA-256 of the canonical JSON of the host's value (see canonicalJSON). It is
// what the sidecar computes with configHash() of @gatehouse/common/canonical.ts
// over the host entry it rendered, whether the host came with a full /load or
// with a put. The value is hashed, not the bytes: Caddy re-encodes a handler's
// JSON before the handler sees it (getModuleNameInline decodes and re-marshals
// it), so the bytes the sidecar sent are not available for hosts of a /load.
func hostHash(raw []byte) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	b, err := appendCanonical(nil, v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// canonicalJSON encodes a value decoded by encoding/json (nil, bool, float64,
// string, []any, map[string]any) exactly as canonicalJson() of the sidecar's
// common/src/canonical.ts does, which is JSON.stringify with object keys
// sorted at every level and no whitespace:
//   - object keys sorted by UTF-16 code units (JavaScript's default sort);
//   - numbers as JavaScript's Number::toString writes a double (shortest
//     round-trip digits; exponent form below 1e-6 and from 1e21 on; -0 is 0);
//   - strings as JSON.stringify escapes them: \" \\ \b \f \n \r \t, other
//     control characters as \u00xx (lowercase hex), everything else literal
//     (no HTML escaping, U+2028/U+2029 literal, non-ASCII as UTF-8).
//
// Strings that JSON.parse would keep as unpaired UTF-16 surrogates are
// replaced by U+FFFD when Go decodes them, so such (unusual) values hash
// differently on the two sides.
func canonicalJSON(v any) ([]byte, error) { return appendCanonical(nil, v) }

func appendCanonical(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		return appendJSNumber(b, x)
	case string:
		return appendJSString(b, x), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	default:
		return nil, fmt.Errorf("canonical JSON: unexpected %T", v)
	}
}

// compareUTF16 orders strings as JavaScript's default sort does: by UTF-16
// code units. It differs from byte (code point) order only between
// characters above U+FFFF and those in U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// appendJSString writes s as JSON.stringify does.
func appendJSString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// appendJSNumber writes a double as ECMAScript's Number::toString(10) does.
func appendJSNumber(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errors.New("canonical JSON: non-finite number")
	}
	if f == 0 {
		return append(b, '0'), nil
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	// shortest round-trip digits d.ddddde±x
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, err := strconv.Atoi(expText)
	if err != nil {
		return nil, err
	}
	k := len(digits)
	n := exp + 1 // value = digits × 10^(n−k)
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for i := 0; i < n-k; i++ {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for i := 0; i < -n; i++ {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b, nil
}
