package model

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

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
	// FormatGitURL is a git repository's URL of a scheme the intent
	// fetches with: https:// (a host, no user information: credentials are
	// fields of their own) or file:// (a repository on the switch). The
	// git runner checks it again before each run.
	FormatGitURL = &Format{
		Name: "git-url", Doc: "https:// or file:// git repository URL", Hint: "<URL>", Sample: "https://git.example.net/fabric/intent.git",
		Check: CheckGitURL,
	}
	// FormatGitRef is what git fetches at: a branch, a tag, HEAD or a
	// commit id.
	FormatGitRef = &Format{
		Name: "git-ref", Doc: "a branch or tag name (letters, digits, `_ . / -`; no `..`, not starting with `-`, `.` or `/`), HEAD, or a commit id (40 hex digits)", Hint: "<ref>", Sample: "main",
		Check: CheckGitRef,
	}
	// FormatRepoPath is a file's path inside a repository.
	FormatRepoPath = &Format{
		Name: "repo-path", Doc: "a file's path in the repository, relative (no leading `/` or `-`, no empty, `.` or `..` segment, no control characters)", Hint: "<path>", Sample: "switches/leaf1.json",
		Check: CheckRepoPath,
	}
	// FormatCACertificate is one CA certificate: its DER in base64 (one
	// line, as every string field is).
	FormatCACertificate = &Format{
		Name: "ca-certificate", Doc: "a CA certificate: its DER in base64 (openssl x509 -outform DER | base64 -w0)", Hint: "<base64>",
		Sample: sampleCA,
		Check: func(s string) string {
			if _, err := ParseCACertificate(s); err != nil {
				return err.Error()
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

// sampleCA is a CA certificate for examples (ed25519, "Example Intent
// CA"): FormatCACertificate's Sample must pass its Check.
const sampleCA = "MIIBTzCCAQGgAwIBAgIUTu2wvfy/8/0w8Z9uB3Mp0iy8yBUwBQYDK2VwMBwxGjAYBgNVBAMMEUV4YW1wbGUgSW50ZW50IENBMCAXDTI2MTIwNzIzNDgwOVoYDzIxMjYxMTEzMjM0ODA5WjAcMRowGAYDVQQDDBFFeGFtcGxlIEludGVudCBDQTAqMAUGAytlcAMhABSTKS3e6ZLIS5nraGxgwLH5TpeZwhjJThxhEFhfnA05o1MwUTAdBgNVHQ4EFgQU9DlvrK6nV6YNNvW0N0J0pG3CK1QwHwYDVR0jBBgwFoAU9DlvrK6nV6YNNvW0N0J0pG3CK1QwDwYDVR0TAQH/BAUwAwEB/zAFBgMrZXADQQDmelDn93zTh5kRRX10yofcv3Xff1Ny8titV2xUTTyVfNigHZf24SYNAcXkv+2vMIE4EGs5JhRJFF35d7A+1WIA"

// MaxIntentCAs bounds IntentSource's CACertificates.
const MaxIntentCAs = 8

// CheckGitURL is FormatGitURL's rule: "" or what is wrong with s. Hostile
// forms are refused: an option (a leading '-', here or in the host), git's
// remote helpers (ext::, fd::, host:path), other schemes, user
// information, control characters.
func CheckGitURL(s string) string {
	const want = "an https:// URL with a host and no user information, or a file:// URL of an absolute path"
	u, err := url.Parse(s)
	if err != nil || strings.HasPrefix(s, "-") || strings.ContainsFunc(s, IsLineBreaking) || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return want
	}
	switch u.Scheme {
	case "https":
		if u.Hostname() == "" || strings.HasPrefix(u.Hostname(), "-") {
			return want
		}
	case "file":
		if u.Host != "" || CheckFilePath(u.Path, false) != "" {
			return want
		}
	default:
		return want
	}
	return ""
}

// gitRefRE is a branch or tag name's characters; the commit id form is
// gitCommitRE.
var (
	gitRefRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]{0,254}$`)
	gitCommitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// CheckGitRef is FormatGitRef's rule: "" or what is wrong with s.
func CheckGitRef(s string) string {
	if gitCommitRE.MatchString(s) {
		return ""
	}
	if !gitRefRE.MatchString(s) || strings.Contains(s, "..") || strings.Contains(s, "//") || strings.HasSuffix(s, "/") ||
		strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") || strings.Contains(s, "/.") {
		return "a branch or tag name (letters, digits, _ . / -; no .., not starting with - . or /), HEAD or a commit id of 40 hex digits"
	}
	return ""
}

// CheckRepoPath is FormatRepoPath's rule: "" or what is wrong with s.
func CheckRepoPath(s string) string {
	if s == "" || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "-") {
		return "a relative path naming a file in the repository"
	}
	if why := CheckFilePath("/"+s, false); why != "" {
		return "a relative path naming a file in the repository (" + why + ")"
	}
	return ""
}

// ParseCACertificate reads one CA certificate given as its DER in base64.
func ParseCACertificate(s string) (*x509.Certificate, error) {
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("a CA certificate's DER in base64")
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("a CA certificate's DER in base64 (%v)", err)
	}
	if !c.IsCA {
		return nil, errors.New("a CA certificate (this one is not a CA: its basic constraints say so)")
	}
	return c, nil
}

func intentKinds() []*Kind {
	return []*Kind{
		{
			Name: "IntentSource", Class: Config, Role: RoleAdmin,
			CLI: &CLICommand{Words: []string{"intent"}, Prompt: []string{"intent"}},
			Doc: "Where the switch's intended configuration comes from (docs/ztp.md): a saved configuration document at a URL (HTTP or HTTPS) or a file in a git repository at a ref (RepoURL, Path, TargetRevision), polled every Interval seconds (or at once by IntentFetch), verified (an ed25519 detached signature at the URL + \".sig\", or Path + \".sig\" at the same commit), and applied whole as one commit of source intent awaiting confirmation by a health check when it changed (the intent is the whole configuration: objects it does not list are deleted; accounts and the IntentSource are kept, and a document holding either is refused). Drift from it is DriftState. One source (Name default).",
			Fields: []*Field{
				{Name: "Name", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "URL", Type: String, Format: FormatHTTPURL, MaxLen: 2048, Doc: "the document's URL; its signature is at the URL + \".sig\" (64 bytes, raw or base64). Either URL or RepoURL"},
				{Name: "RepoURL", Type: String, Format: FormatGitURL, MaxLen: 2048, Doc: "a git repository holding the document (https:// or file://), fetched with git into the data directory; either URL or RepoURL"},
				{Name: "Path", Type: String, Format: FormatRepoPath, MaxLen: 1024, Doc: "with RepoURL: the document's path in the repository; its signature is Path + \".sig\" at the same commit"},
				{Name: "TargetRevision", Type: String, Default: "HEAD", Format: FormatGitRef, MaxLen: 255, Doc: "with RepoURL: the branch, tag or commit id whose document is applied (HEAD: the repository's default branch)"},
				{Name: "RepoSizeLimit", Type: Int, Default: int64(256), Range: rng(1, 4096), Doc: "with RepoURL: MiB the repository's cache in the data directory may hold (what a fetch of TargetRevision at depth 1 brings); a larger repository is refused"},
				{Name: "CACertificates", Type: StringList, Format: FormatCACertificate, Doc: "the CAs (each its DER in base64) that sign the HTTPS server's certificate (URL, RepoURL and HealthURL), instead of the system's; at most 8"},
				{Name: "Interval", Type: Int, Default: int64(300), Range: rng(5, 86400), Doc: "seconds between polls"},
				{Name: "Username", Type: String, MaxLen: 128, Doc: "with Password: HTTP basic authentication; else Password is sent as a bearer token"},
				{Name: "Password", Type: String, Secret: Sealed, MaxLen: 1024, Doc: "the bearer token (or, with Username, the basic password) sent to the server; write-only, stored encrypted"},
				{Name: "PublicKey", Type: String, Format: FormatEd25519Key, MaxLen: 64, Doc: "the key that signs the documents; required unless AllowUnsigned"},
				{Name: "AllowUnsigned", Type: Bool, Default: false, Doc: "apply documents without a signature (trust the server and the network)"},
				{Name: "Policy", Type: String, Default: "report", Enum: IntentPolicies, Doc: "report: a change made otherwise is drift, shown in DriftState; revert: the next poll applies the intent again"},
				{Name: "ConfirmWait", Type: Int, Default: int64(120), Range: rng(0, 3600), Doc: "seconds an intent's commit awaits its confirmation, which the health check gives; unconfirmed, it is rolled back. 0: a plain commit"},
				{Name: "HealthURL", Type: String, Format: FormatHTTPURL, MaxLen: 2048, Doc: "the health check: a 2xx answer confirms the intent's commit; \"\": the intent's URL answers again (the switch still reaches its source of truth)"},
				{Name: "WebhookSecret", Type: String, Secret: Sealed, Format: FormatWebhookSecret, MaxLen: 256, Doc: "the shared secret of the push webhook (POST " + IntentWebhookPath + ", no login): GitHub's, Gitea's and Forgejo's X-Hub-Signature-256 (HMAC-SHA256 of the body under it) or GitLab's X-Gitlab-Token (it); a push to TargetRevision fetches at once. \"\": the webhook is refused. Write-only, stored encrypted"},
			},
			Check: func(o Object) error {
				switch {
				case (o.Str("URL") == "") == (o.Str("RepoURL") == ""):
					return apierr.BadRequest(apierr.CodeMissingField, "IntentSource", "URL", "URL or RepoURL: give exactly one (a document's URL, or a git repository with its Path)")
				case o.Str("RepoURL") != "" && o.Str("Path") == "":
					return apierr.BadRequest(apierr.CodeMissingField, "IntentSource", "Path", "Path: the document's path in the repository RepoURL is required")
				case len(o.List("CACertificates")) > MaxIntentCAs:
					return apierr.BadRequest(apierr.CodeInvalidValue, "IntentSource", "CACertificates", "CACertificates: at most %d", MaxIntentCAs)
				}
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
				{Name: "Commit", Type: String, Doc: "with RepoURL: the commit id the last verified document was read at"},
				{Name: "AppliedCommit", Type: String, Doc: "with RepoURL: the commit id of the document last applied (or found already in place)"},
				{Name: "AppliedDigest", Type: String, Doc: "the SHA-256 of the document last applied (or found already in place)"},
				{Name: "AppliedRevision", Type: Int, Doc: "the revision that commit made (0: the configuration was the intent already)"},
				{Name: "AppliedAt", Type: String, Doc: "when it was applied"},
				{Name: "Polls", Type: Int, Doc: "fetches since start"},
				{Name: "Refused", Type: Int, Doc: "documents refused since start (fetch, verification or validation failed)"},
				{Name: "LastError", Type: String, Doc: "why the last poll's document was refused; \"\" when it was not (nothing was changed)"},
				{Name: "Webhooks", Type: Int, Doc: "push webhooks accepted (signature or token right) since start"},
				{Name: "WebhooksRefused", Type: Int, Doc: "push webhooks refused since start (no, or a wrong, signature or token; too large; too many)"},
				{Name: "WebhookAt", Type: String, Doc: "when the last push webhook was accepted (RFC 3339)"},
				{Name: "LastWebhook", Type: String, Doc: "what the last push webhook accepted did: a fetch asked for, or why it was ignored (another ref)"},
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

// IntentWebhookPath is where a git server's push webhook tells the
// intent to fetch (no login: its signature or token is the credential).
const IntentWebhookPath = APIPrefix + "intent/webhook"

// MaxIntentWebhookBody bounds a webhook's body: its signature covers it
// whole, so it is read whole before anything is decided.
const MaxIntentWebhookBody = 1 << 20

// MinWebhookSecret is the shortest WebhookSecret: the webhook is open to
// anyone who reaches the switch, and the secret is all that stands there.
const MinWebhookSecret = 16

// FormatWebhookSecret is a webhook's shared secret: printable ASCII,
// without spaces (git servers' forms take it as one word), at least
// MinWebhookSecret characters.
var FormatWebhookSecret = &Format{
	Name: "webhook-secret", Doc: fmt.Sprintf("at least %d printable ASCII characters without spaces (openssl rand -hex 32)", MinWebhookSecret), Hint: "<secret>",
	Sample: "3f9c1e0a7b2d4c6e8f1a3b5c7d9e0f21",
	Check: func(s string) string {
		if len(s) < MinWebhookSecret || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return fmt.Sprintf("at least %d printable ASCII characters without spaces (openssl rand -hex 32)", MinWebhookSecret)
		}
		return ""
	},
}
