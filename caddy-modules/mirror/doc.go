// Package mirror will hold Gatehouse's request-mirroring handler, registered
// as `http.handlers.gatehouse_mirror` (a distinct ID: third-party modules
// already use `http.handlers.mirror`).
//
// Planned: send a copy of each request (method, URI, headers and a bounded,
// buffered body) to one or more mirror targets asynchronously, never delaying
// or altering the primary response; per-route targets, sampling rate and body
// size limit from the JSON the sidecar renders; a bounded queue that drops
// copies under load instead of growing.
//
// Nothing is registered yet.
package mirror
