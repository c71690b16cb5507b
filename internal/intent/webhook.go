package intent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/model"
)

// The push webhook (docs/ztp.md, "Told by a push"): a git server POSTs to
// model.IntentWebhookPath without a swmgr login when a branch is pushed;
// the request is authenticated by the IntentSource's WebhookSecret alone,
// and a push to the source's TargetRevision asks the poller for a fetch
// now. Pushes coalesce: one fetch is queued at most, so a burst of pushes
// makes one fetch after the one under way.

// Bounds of the webhook.
const (
	// MaxWebhookBody bounds a webhook's body.
	MaxWebhookBody = model.MaxIntentWebhookBody
	// webhookSlots bounds the webhooks read and checked at once, from all
	// addresses (the throttle lets each address have 5 under way): the
	// memory unauthenticated bodies may take. Slow senders that hold them
	// all make the webhook answer 503, and the poll is left: it is an
	// accelerator.
	webhookSlots = 16
	// MaxWebhookBodyTimeout bounds the time its body may take to arrive:
	// a git server sends it at once.
	MaxWebhookBodyTimeout = 10 * time.Second
	// webhookThrottleName is the name the login throttle counts the
	// webhook's failures under, per client address as a login's: it
	// cannot be a User's (user names have no spaces).
	webhookThrottleName = "IntentSource webhook"
)

// The headers a git server authenticates its webhook with.
const (
	// HeaderHubSignature256 is GitHub's (also Gitea's and Forgejo's):
	// "sha256=" and the hex HMAC-SHA256 of the body under the secret.
	HeaderHubSignature256 = "X-Hub-Signature-256"
	// HeaderGiteaSignature is Gitea's, Gogs' and Forgejo's own form of
	// the same HMAC: its hex digits alone.
	HeaderGiteaSignature   = "X-Gitea-Signature"
	HeaderGogsSignature    = "X-Gogs-Signature"
	HeaderForgejoSignature = "X-Forgejo-Signature"
	// HeaderGitlabToken is GitLab's: the secret itself (the request's TLS
	// is all that protects it).
	HeaderGitlabToken = "X-Gitlab-Token"
	// headerHubSignatureSHA1 is GitHub's older SHA-1 signature: refused.
	headerHubSignatureSHA1 = "X-Hub-Signature"
)

// errWebhookRefused is what a refused webhook is told, whatever the
// reason: which part failed is the log's business, not the sender's.
var errWebhookRefused = apierr.New(http.StatusForbidden, apierr.CodeForbidden, sourceKind, "WebhookSecret",
	"the webhook's signature or token was refused")

// verifyWebhook checks a webhook's credential against secret: GitHub's
// X-Hub-Signature-256, Gitea's, Gogs' or Forgejo's bare hex HMAC, or
// GitLab's X-Gitlab-Token; nil when one is right. The comparisons take the
// same time whatever matches (hmac.Equal over MACs and digests of equal
// length). The error says why for the log; it never holds the secret nor
// what was sent.
func verifyWebhook(h http.Header, body []byte, secret string) error {
	if secret == "" {
		return errors.New("the IntentSource has no WebhookSecret (or there is no IntentSource)")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := mac.Sum(nil)
	checkHex := func(header, value string) error {
		got, err := hex.DecodeString(value)
		if err != nil || len(got) != sha256.Size {
			return fmt.Errorf("%s is not %d hex digits", header, 2*sha256.Size)
		}
		if !hmac.Equal(got, want) {
			return fmt.Errorf("%s does not match the body under the WebhookSecret", header)
		}
		return nil
	}
	if v := h.Get(HeaderHubSignature256); v != "" {
		hexDigits, ok := strings.CutPrefix(v, "sha256=")
		if !ok {
			return fmt.Errorf("%s does not start with sha256=", HeaderHubSignature256)
		}
		return checkHex(HeaderHubSignature256, hexDigits)
	}
	for _, header := range []string{HeaderGiteaSignature, HeaderForgejoSignature, HeaderGogsSignature} {
		if v := h.Get(header); v != "" {
			return checkHex(header, v)
		}
	}
	if v := h.Get(HeaderGitlabToken); v != "" {
		got, exp := sha256.Sum256([]byte(v)), sha256.Sum256([]byte(secret))
		if !hmac.Equal(got[:], exp[:]) {
			return fmt.Errorf("%s is not the WebhookSecret", HeaderGitlabToken)
		}
		return nil
	}
	if h.Get(headerHubSignatureSHA1) != "" {
		return fmt.Errorf("only %s (SHA-1) was sent: set the webhook to send %s", headerHubSignatureSHA1, HeaderHubSignature256)
	}
	return fmt.Errorf("no %s, %s or %s header", HeaderHubSignature256, HeaderGiteaSignature, HeaderGitlabToken)
}

// pushEvent is what a push's body says that the webhook reads: GitHub's,
// Gitea's, Forgejo's and GitLab's pushes all name the ref pushed, and the
// repository's default branch (GitLab's under project).
type pushEvent struct {
	Ref        string `json:"ref"`
	Repository struct {
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
	Project struct {
		DefaultBranch string `json:"default_branch"`
	} `json:"project"`
}

// readPush decodes a push's body: JSON, or GitHub's form encoding (its
// JSON in the field payload). A body that is neither names no ref.
func readPush(contentType string, body []byte) pushEvent {
	var ev pushEvent
	if strings.HasPrefix(contentType, "application/x-www-form-urlencoded") {
		if q, err := url.ParseQuery(string(body)); err == nil {
			body = []byte(q.Get("payload"))
		}
	}
	_ = json.Unmarshal(body, &ev) // no ref: a fetch is asked for all the same
	return ev
}

// webhookEvent is the event a git server says it sends: "" when no
// header names one (a caller of its own), and whether it is a push.
func webhookEvent(h http.Header) (string, bool) {
	for _, header := range []string{"X-GitHub-Event", "X-Gitea-Event", "X-Forgejo-Event", "X-Gogs-Event", "X-Gitlab-Event"} {
		if v := h.Get(header); v != "" {
			return v, v == "push" || v == "Push Hook" || v == "Tag Push Hook"
		}
	}
	return "", true
}

// pushWanted says whether a push asks for a fetch of src, and what the
// webhook answers about it: a push to the ref the source follows does;
// one to another ref does not; a source at a URL (not a repository), or a
// body that names no ref, fetches whatever was pushed.
func pushWanted(src *source, ev pushEvent) (bool, string) {
	if src.git == nil {
		return true, "a fetch of " + src.url + " is queued"
	}
	ref := src.git.ref
	queued := fmt.Sprintf("a fetch of %s is queued", src.where())
	switch {
	case ev.Ref == "":
		return true, queued
	case gitCommitID(ref):
		return false, fmt.Sprintf("push to %s ignored: TargetRevision is a commit id, which no push changes", ev.Ref)
	case ref == "HEAD":
		def := cmpOr(ev.Repository.DefaultBranch, ev.Project.DefaultBranch)
		if def == "" || ev.Ref == "refs/heads/"+def {
			return true, queued
		}
		return false, fmt.Sprintf("push to %s ignored: TargetRevision is HEAD, the default branch %s", ev.Ref, def)
	case ev.Ref == ref || ev.Ref == "refs/heads/"+ref || ev.Ref == "refs/tags/"+ref:
		return true, queued
	}
	return false, fmt.Sprintf("push to %s ignored: TargetRevision is %s", ev.Ref, ref)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// gitCommitID reports whether ref is a commit id (what model.CheckGitRef
// takes as one).
func gitCommitID(ref string) bool {
	if len(ref) != 40 {
		return false
	}
	_, err := hex.DecodeString(ref)
	return err == nil && strings.ToLower(ref) == ref
}

// WebhookOptions configure the webhook's handler.
type WebhookOptions struct {
	// Throttle counts the refused webhooks per client address as failed
	// logins, and locks an address out as it does a login's: the
	// service's login throttle.
	Throttle *auth.Throttle
	// RefusalDelay holds an answer refused by the throttle (429), as
	// logins are held.
	RefusalDelay time.Duration
	// BodyTimeout bounds the time the body may take to arrive (0, or more
	// than MaxWebhookBodyTimeout: MaxWebhookBodyTimeout).
	BodyTimeout time.Duration
}

// WebhookHandler serves model.IntentWebhookPath (POST, no login): a push
// whose signature or token is right asks for a fetch now (202), or is
// ignored with the reason (200: git servers send again what failed); a
// wrong one is refused with 403, the reason only in the log.
func (s *Service) WebhookHandler(o WebhookOptions) http.Handler {
	if o.BodyTimeout <= 0 || o.BodyTimeout > MaxWebhookBodyTimeout {
		o.BodyTimeout = MaxWebhookBodyTimeout
	}
	if o.Throttle == nil {
		o.Throttle = auth.NewThrottle(auth.ThrottleOptions{})
	}
	return &webhook{s: s, o: o, slots: make(chan struct{}, webhookSlots)}
}

type webhook struct {
	s     *Service
	o     WebhookOptions
	slots chan struct{}
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, r, apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "", "", "%s is not allowed on %s; allowed: POST", r.Method, r.URL.Path))
		return
	}
	addr := auth.RequestAddr(r)
	// The throttle first: an address locked out (or with 5 under way)
	// takes no slot, even while its answer is held.
	attempt, wait := h.o.Throttle.Begin(webhookThrottleName, addr)
	if wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		h.s.refusedWebhook(addr, fmt.Sprintf("refused webhooks (or too many under way) from the address: try again in %d s", secs))
		auth.HoldRefusal(r.Context(), h.o.RefusalDelay)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeError(w, r, apierr.New(http.StatusTooManyRequests, apierr.CodeTooManyAttempts, "", "", "too many refused webhooks (or too many at once) from %s; try again in %d s", addr, secs))
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		attempt.End(auth.Aborted)
		h.s.refusedWebhook(addr, "too many webhooks at once")
		w.Header().Set("Retry-After", "1")
		writeError(w, r, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, "", "", "too many webhooks at once; try again"))
		return
	}
	body, bad := readWebhookBody(w, r, h.o.BodyTimeout)
	if bad != nil {
		attempt.End(auth.Failed)
		h.s.refusedWebhook(addr, bad.Message)
		writeError(w, r, bad)
		return
	}
	src, err := h.s.readSource(r.Context())
	if err != nil {
		attempt.End(auth.Aborted)
		h.s.log.Error("intent webhook: read the IntentSource", "err", err)
		writeError(w, r, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, "", "", "the IntentSource cannot be read; try again later"))
		return
	}
	var secret string
	if src != nil {
		secret = src.webhookSecret
	}
	if err := verifyWebhook(r.Header, body, secret); err != nil {
		attempt.End(auth.Failed)
		h.s.refusedWebhook(addr, err.Error())
		writeError(w, r, errWebhookRefused)
		return
	}
	attempt.End(auth.Succeeded)
	status, msg := http.StatusAccepted, ""
	if event, push := webhookEvent(r.Header); !push {
		status, msg = http.StatusOK, fmt.Sprintf("event %q ignored: only pushes fetch", event)
	} else {
		var want bool
		want, msg = pushWanted(src, readPush(r.Header.Get("Content-Type"), body))
		if want {
			h.s.pushed(addr)
		} else {
			status = http.StatusOK
		}
	}
	h.s.acceptedWebhook(addr, msg)
	writeJSON(w, status, map[string]string{"Result": http.StatusText(status), "Message": msg})
}

// readWebhookBody reads a body of at most MaxWebhookBody bytes within
// timeout: 413 for a larger one, 400 for one that did not arrive.
func readWebhookBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) ([]byte, *apierr.Error) {
	tooLarge := apierr.New(http.StatusRequestEntityTooLarge, apierr.CodeBodyTooLarge, "", "", "the body is larger than %d bytes", MaxWebhookBody)
	if r.ContentLength > MaxWebhookBody {
		return nil, tooLarge
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(timeout))
	defer rc.SetReadDeadline(time.Time{})
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge
	case err != nil:
		return nil, apierr.New(http.StatusBadRequest, apierr.CodeMalformedJSON, "", "", "the body could not be read within %v", timeout)
	}
	return body, nil
}

func writeError(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	if r.ContentLength != 0 && e.Status != http.StatusForbidden {
		// The body was not read whole: close rather than drain it.
		w.Header().Set("Connection", "close")
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Status)
	w.Write(append(e.Body(), '\n'))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// pushed asks the poller for a fetch now, on behalf of a push from addr:
// one is queued at most, so pushes during a poll make one poll after it.
func (s *Service) pushed(addr netip.Addr) {
	s.mu.Lock()
	s.pushFrom = addr
	s.mu.Unlock()
	poke(s.push)
}

// acceptedWebhook counts a webhook whose signature or token was right.
func (s *Service) acceptedWebhook(addr netip.Addr, msg string) {
	s.mu.Lock()
	s.st.webhooks++
	s.st.webhookAt, s.st.lastWebhook = time.Now(), msg
	s.mu.Unlock()
	s.log.Info("intent webhook", "addr", addr.String(), "result", msg)
}

// refusedWebhook counts a refused webhook and logs why (never the secret
// nor what was sent for it).
func (s *Service) refusedWebhook(addr netip.Addr, why string) {
	s.mu.Lock()
	s.st.webhooksRefused++
	s.mu.Unlock()
	s.log.Warn("intent webhook refused", "addr", addr.String(), "reason", why)
}

// pushedBy is the address of the push that asked for the poll about to
// run, if one did: woken by it, or by another reason while a push was
// waiting, which the poll then serves too.
func (s *Service) pushedBy(woken bool) (netip.Addr, bool) {
	if !woken {
		select {
		case <-s.push:
		default:
			return netip.Addr{}, false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pushFrom, true
}
