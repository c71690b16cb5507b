// Package test holds swmgr's black-box tests. TestMain builds the real
// binary once (go build ./cmd/swmgr); each test starts it as a subprocess
// (`swmgr serve`) on a fresh data directory and a free loopback port, drives
// it over plain HTTP the way operators' scripts and the FlexSwitch SDK do,
// and stops it with SIGTERM, expecting exit status 0.
//
// The tests use only the standard library and know nothing of swmgr's
// internals: what they check is the wire contract of
// docs/api.md (status codes, bodies, headers, paging, the config log) and
// the behaviour of the process (the data-directory lock, clean shutdown,
// durability across restarts and kill -9).
package test
