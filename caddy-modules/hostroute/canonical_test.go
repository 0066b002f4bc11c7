package hostroute

import (
	"encoding/json"
	"testing"
)

// canonicalVectors: inputs with their canonical JSON and hash as computed by
// canonicalJson() and configHash() of sidecar/common/src/canonical.ts (Node
// 22: JSON.parse, then the sidecar's function; the numbers, escapes and key
// orders where JavaScript and Go differ by default).
var canonicalVectors = []struct{ in, canon, hash string }{
	{
		in:    "{\"b\":1,\"a\":[true,false,null],\"c\":{\"z\":\"x\",\"y\":0.1}}",
		canon: "{\"a\":[true,false,null],\"b\":1,\"c\":{\"y\":0.1,\"z\":\"x\"}}",
		hash:  "eccef9779447ff3cf0d753874b84e821e70ff2b4271518ea68a763c9d2643a6e",
	},
	{
		in:    "[0,-0,1,-1,0.1,1e21,1e-7,123456789012345680000,1.5e-7,5e-324,1.7976931348623157e308,0.000001,1e20,123.456,-2.5e-10,100,1e2,12345678901234567890]",
		canon: "[0,0,1,-1,0.1,1e+21,1e-7,123456789012345680000,1.5e-7,5e-324,1.7976931348623157e+308,0.000001,100000000000000000000,123.456,-2.5e-10,100,100,12345678901234567000]",
		hash:  "8355fc126a81a772e6de66bfd4b51f9ff2ffdce5c1723055d0e051c33260b0a0",
	},
	{
		in:    "\"quote\\\" backslash\\\\ ctl\\u0001\\u001f\\b\\f\\n\\r\\t del\\u007f html<>& uni\\u00e9\\u2028\\u2029 emoji\\ud83d\\ude00\"",
		canon: "\"quote\\\" backslash\\\\ ctl\\u0001\\u001f\\b\\f\\n\\r\\t del html<>& unié   emoji😀\"",
		hash:  "6fda0a48cd9798dc12c19b3ed34bfb392b6bee6c1662d9b0afda432ed3d9ac74",
	},
	{
		in:    "{\"\\ud83d\\ude00\":1,\"\\uffff\":2,\"a\":3,\"B\":4,\"\u00e9\":5,\"\":6}",
		canon: "{\"\":6,\"B\":4,\"a\":3,\"é\":5,\"😀\":1,\"￿\":2}",
		hash:  "4b49a91c7b59c9e3688fcbc61f7313f2019c8c96147077e51ce82a00ffab3152",
	},
	{
		in:    "{\"routes\":[{\"handle\":[{\"handler\":\"static_response\",\"status_code\":308,\"headers\":{\"Location\":[\"https://{http.request.host}{http.request.uri}\"]}}]}]}",
		canon: "{\"routes\":[{\"handle\":[{\"handler\":\"static_response\",\"headers\":{\"Location\":[\"https://{http.request.host}{http.request.uri}\"]},\"status_code\":308}]}]}",
		hash:  "58d47b8388cd1a00a364524cebf6db5d3356bffaecf8986cb506fbe19a0eb430",
	},
}

func TestCanonicalJSONMatchesTheSidecar(t *testing.T) {
	for _, v := range canonicalVectors {
		var x any
		if err := json.Unmarshal([]byte(v.in), &x); err != nil {
			t.Fatal(err)
		}
		got, err := canonicalJSON(x)
		if err != nil {
			t.Fatalf("%s: %v", v.in, err)
		}
		if string(got) != v.canon {
			t.Errorf("canonical of %s:\n got %s\nwant %s", v.in, got, v.canon)
		}
		hash, err := hostHash([]byte(v.in))
		if err != nil || hash != v.hash {
			t.Errorf("hash of %s: got %s (%v), want %s", v.in, hash, err, v.hash)
		}
		// Caddy hands a handler its JSON re-encoded by encoding/json (HTML
		// escaping, sorted keys, float formatting): the hash is the same
		reencoded, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if hash, _ := hostHash(reencoded); hash != v.hash {
			t.Errorf("hash of Go's re-encoding %s: got %s, want %s", reencoded, hash, v.hash)
		}
	}
}

func TestCanonicalJSONRefusesNonJSON(t *testing.T) {
	if _, err := hostHash([]byte("{")); err == nil {
		t.Error("no error for broken JSON")
	}
}
