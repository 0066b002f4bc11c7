// A trivial HTTP backend for scripts/bench/routes.ts: answers every request with "ok\n".
// Usage: routes-backend <host:port>
package main

import (
	"log"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: routes-backend <host:port>")
	}
	body := []byte("ok\n")
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	})
	log.Fatal(http.ListenAndServe(os.Args[1], h))
}
