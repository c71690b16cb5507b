package model

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/url"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Following an intent (docs/ztp.md, "Intent"): the switch polls a saved
// configuration document (its intended configuration), verifies it and
// applies it whole; the configuration's distance from it is DriftState;
// CheckCompliance compares the running configuration with any document.
// Where the intent comes from is an admin's business: it replaces the
// whole configuration.

// IntentPolicies are what IntentSource's Policy does about drift.
var IntentPolicies = []string{"report", "revert"}

var (
	// FormatHTTPURL is an http:// or https:// URL with a host.
	FormatHTTPURL = &Format{
		Name: "http-url", Doc: "http:// or https:// URL", Hint: "<URL>", Sample: "https://192.0.2.1/switch1.json",
		Check: func(s string) string {
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
				return "an http:// or https:// URL with a host and no user information (credentials are fields of their own)"
			}
			return ""
		},
	}
	// FormatEd25519Key is an ed25519 public key: its 32 bytes in base64.
	FormatEd25519Key = &Format{
		Name: "ed25519-public-key", Doc: "an ed25519 public key: its 32 bytes in base64", Hint: "<base64>", Sample: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
		Check: func(s string) string {
			if b, err := base64.StdEncoding.DecodeString(s); err != nil || len(b) != ed25519.PublicKeySize {
				return "an ed25519 public key: its 32 bytes in base64 (openssl pkey -pubin -outform DER | tail -c 32 | base64)"
			}
			return ""
		},
	}
)

func intentKinds() []*Kind {
	return []*Kind{
		{
			Name: "IntentSource", Class: Config, Role: RoleAdmin,
			CLI: &CLICommand{Words: []string{"intent"}, Prompt: []string{"intent"}},
			Doc: "Where the switch's intended configuration comes from (docs/ztp.md): a saved configuration document polled over HTTP or HTTPS every Interval seconds (or at once by IntentFetch), verified (an ed25519 detached signature at the URL + \".sig\"), and applied whole as one commit of source intent awaiting confirmation by a health check when it changed (the intent is the whole configuration: objects it does not list are deleted; accounts and the IntentSource are kept, and a document holding either is refused). Drift from it is DriftState. One source (Name default).",
			Fields: []*Field{
				{Name: "Name", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "URL", Type: String, Required: true, Format: FormatHTTPURL, MaxLen: 2048, Doc: "the document's URL; its signature is at the URL + \".sig\" (64 bytes, raw or base64)"},
				{Name: "Interval", Type: Int, Default: int64(300), Range: rng(5, 86400), Doc: "seconds between polls"},
				{Name: "Username", Type: String, MaxLen: 128, Doc: "with Password: HTTP basic authentication; else Password is sent as a bearer token"},
				{Name: "Password", Type: String, Secret: Sealed, MaxLen: 1024, Doc: "the bearer token (or, with Username, the basic password) sent to the server; write-only, stored encrypted"},
				{Name: "PublicKey", Type: String, Format: FormatEd25519Key, MaxLen: 64, Doc: "the key that signs the documents; required unless AllowUnsigned"},
				{Name: "AllowUnsigned", Type: Bool, Default: false, Doc: "apply documents without a signature (trust the server and the network)"},
				{Name: "Policy", Type: String, Default: "report", Enum: IntentPolicies, Doc: "report: a change made otherwise is drift, shown in DriftState; revert: the next poll applies the intent again"},
				{Name: "ConfirmWait", Type: Int, Default: int64(120), Range: rng(0, 3600), Doc: "seconds an intent's commit awaits its confirmation, which the health check gives; unconfirmed, it is rolled back. 0: a plain commit"},
				{Name: "HealthURL", Type: String, Format: FormatHTTPURL, MaxLen: 2048, Doc: "the health check: a 2xx answer confirms the intent's commit; \"\": the intent's URL answers again (the switch still reaches its source of truth)"},
			},
			Check: func(o Object) error {
				if o.Str("PublicKey") == "" && !o.Bool("AllowUnsigned") {
					return apierr.BadRequest(apierr.CodeMissingField, "IntentSource", "PublicKey", "PublicKey: documents must be signed; give the key, or set AllowUnsigned")
				}
				return nil
			},
			StateOnly: []*Field{
				{Name: "LastPollAt", Type: String, Doc: "when the document was last fetched (RFC 3339)"},
				{Name: "NextPollAt", Type: String, Doc: "when it is fetched next"},
				{Name: "Digest", Type: String, Doc: "the SHA-256 of the last document that passed verification, hex"},
				{Name: "Verified", Type: String, Doc: "how it was verified: signature or unsigned"},
				{Name: "AppliedDigest", Type: String, Doc: "the SHA-256 of the document last applied (or found already in place)"},
				{Name: "AppliedRevision", Type: Int, Doc: "the revision that commit made (0: the configuration was the intent already)"},
				{Name: "AppliedAt", Type: String, Doc: "when it was applied"},
				{Name: "Polls", Type: Int, Doc: "fetches since start"},
				{Name: "Refused", Type: Int, Doc: "documents refused since start (fetch, verification or validation failed)"},
				{Name: "LastError", Type: String, Doc: "why the last poll's document was refused; \"\" when it was not (nothing was changed)"},
			},
		},
		{
			Name: "DriftState", Class: State, Source: SourceService, Singleton: true,
			CLI:     &CLICommand{Words: []string{"drift"}},
			Metrics: &Metrics{Subsystem: "intent", Doc: "Intent"},
			Doc:     "How the running configuration differs from the intent last applied (IntentSource), recomputed after every commit: objects missing (in the intent, not running), extra (running, not in the intent) and different (field by field, secrets masked).",
			Fields: []*Field{
				{Name: "Following", Type: Bool, Doc: "an intent was applied and is followed", Metric: &Metric{Name: "following"}},
				{Name: "InDrift", Type: Bool, Doc: "the running configuration differs from the intent", Metric: &Metric{Name: "drift"}},
				{Name: "Since", Type: String, Doc: "when it started to differ (RFC 3339); \"\" when it does not"},
				{Name: "CheckedAt", Type: String, Doc: "when the difference was last computed"},
				{Name: "CheckedRevision", Type: Int, Doc: "the revision it was computed at"},
				{Name: "IntentDigest", Type: String, Doc: "the SHA-256 of the intent it compares with"},
				{Name: "IntentRevision", Type: Int, Doc: "the revision that applied it"},
				{Name: "Differences", Type: Int, Doc: "objects that differ", Metric: &Metric{Name: "drift_objects"}},
				{Name: "Objects", Type: StringList, Doc: "the first 100 differences: \"missing|extra|different Kind Key: Field before -> after, ...\""},
				{Name: "LastError", Type: String, Doc: "why the difference could not be computed"},
			},
		},
		{
			Name: "IntentFetch", Class: Action, Role: RoleAdmin,
			Doc: "Fetches the IntentSource's document now (instead of at the next poll), verifies it and applies it if it changed (or, Policy revert, if the configuration drifted). Answers once the poll is done, with its outcome.",
		},
		{
			Name: "CheckCompliance", Class: Action, Role: RoleReader, DryRunnable: true, NotLogged: true,
			Doc: "Compares the running configuration with a document (a saved configuration file's content) and answers the difference, changing nothing: {\"compliant\": bool, \"missing\": [...], \"extra\": [...], \"different\": [...]} (Nautobot Golden Config's JSON compliance, per object, with field-level before and after; secrets masked). Accounts and the IntentSource are out of the comparison, as an intent leaves them.",
			Fields: []*Field{
				{Name: "Document", Type: Document, Required: true, Secret: Transient, Doc: "a saved configuration document: {\"SchemaVersion\": N, \"ConfigData\": {...}} or FlexSwitch's {\"ConfigData\": {...}}; may hold secrets in clear, so it is never logged"},
			},
		},
	}
}
