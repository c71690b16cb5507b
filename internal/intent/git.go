package intent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/ztp"
)

// Bounds of a git source.
const (
	// DefaultGitTimeout bounds one git run.
	DefaultGitTimeout = 120 * time.Second
	// maxGitStderr is what is kept of git's messages for the reason.
	maxGitStderr = 4 << 10
	// maxGitStdout bounds what swmgr reads of git's output (a document,
	// at most ztp.MaxDocument, is the largest).
	maxGitStdout = ztp.MaxDocument + 4<<10
	// sizeCheckEvery spaces the checks of the cache's size while git
	// fetches.
	sizeCheckEvery = 50 * time.Millisecond
)

// gitRepo is where a git source's document is.
type gitRepo struct {
	url, path, ref string
	// authHeader is the HTTP Authorization header's value ("" for none):
	// git gets it in its environment, never on its command line or in a
	// file.
	authHeader string
	// caPEM, if set, are the only CAs that sign an https server.
	caPEM []byte
	// maxSize bounds the repository's cache (RepoSizeLimit): what one
	// fetch of the ref brings at depth 1, and what earlier ones left.
	maxSize int64
}

// gitFile is a document read from a repository, with its signature (nil
// when there is none at the same commit).
type gitFile struct {
	commit    string
	data, sig []byte
}

// gitFetcher runs Debian's git (no shell, an environment and
// configuration of its own, no hooks, only the repository's protocol,
// bounded in size and time) to fetch a ref into a bare repository cached
// under dir, then reads files at the fetched commit.
type gitFetcher struct {
	program string // "git" on PATH
	dir     string // the cache: one bare repository for the one source
	timeout time.Duration
}

// errNoDataDir refuses a git source without a data directory to cache it.
var errNoDataDir = errors.New("a git source needs the data directory (its cache is there)")

// cacheFor is the bare repository caching r, made when missing; other
// repositories' caches (an earlier RepoURL) are removed.
func (g *gitFetcher) cacheFor(ctx context.Context, r gitRepo) (string, error) {
	if g.dir == "" {
		return "", errNoDataDir
	}
	sum := sha256.Sum256([]byte(r.url))
	name := hex.EncodeToString(sum[:8])
	if err := os.MkdirAll(g.dir, 0o700); err != nil {
		return "", fmt.Errorf("git cache: %w", err)
	}
	entries, err := os.ReadDir(g.dir)
	if err != nil {
		return "", fmt.Errorf("git cache: %w", err)
	}
	for _, e := range entries {
		if e.Name() != name {
			os.RemoveAll(filepath.Join(g.dir, e.Name()))
		}
	}
	cache := filepath.Join(g.dir, name)
	// A cache grown past half the bound (commits added since it was made)
	// is fetched afresh: a fetch has room for the ref's whole tree.
	if size, err := dirSize(cache); err == nil && size > r.maxSize/2 {
		os.RemoveAll(cache)
	}
	if _, err := os.Stat(filepath.Join(cache, "repo.git", "HEAD")); err == nil {
		return cache, nil
	}
	os.RemoveAll(cache)
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", fmt.Errorf("git cache: %w", err)
	}
	if _, err := g.run(ctx, cache, nil, 0, "init", "-q", "--bare"); err != nil {
		os.RemoveAll(cache)
		return "", err
	}
	return cache, nil
}

// clear removes the cache (the IntentSource is gone).
func (g *gitFetcher) clear() error {
	if g.dir == "" {
		return nil
	}
	return os.RemoveAll(g.dir)
}

// read fetches r's ref and reads its document and the signature beside it
// at the commit fetched.
func (g *gitFetcher) read(ctx context.Context, r gitRepo, maxDoc int64) (gitFile, error) {
	if err := r.check(); err != nil {
		return gitFile{}, err
	}
	cache, err := g.cacheFor(ctx, r)
	if err != nil {
		return gitFile{}, err
	}
	if _, err := g.run(ctx, cache, &r, r.maxSize, "fetch", "-q", "--depth=1", "--no-tags", "--no-recurse-submodules", "--end-of-options", r.url, r.ref); err != nil {
		return gitFile{}, err
	}
	out, err := g.run(ctx, cache, nil, 0, "rev-parse", "--verify", "--end-of-options", "FETCH_HEAD^{commit}")
	if err != nil {
		return gitFile{}, err
	}
	commit := strings.TrimSpace(string(out))
	if !isObjectID(commit) {
		return gitFile{}, fmt.Errorf("git: %q is not a commit id", commit)
	}
	f := gitFile{commit: commit}
	if f.data, err = g.file(ctx, cache, commit, r.path, maxDoc); err != nil {
		return gitFile{}, err
	}
	if f.data == nil {
		return gitFile{}, fmt.Errorf("git: %s has no file %s at %s (commit %s)", r.url, r.path, r.ref, commit)
	}
	if f.sig, err = g.file(ctx, cache, commit, r.path+ztp.SignatureSuffix, ztp.MaxSignature); err != nil {
		return gitFile{}, err
	}
	return f, nil
}

// file reads the file at path in commit, at most max bytes (more is
// refused); nil when there is no such file. A file is a regular file's
// blob: a directory, a symbolic link or a submodule at path is refused.
func (g *gitFetcher) file(ctx context.Context, cache, commit, path string, max int64) ([]byte, error) {
	// The path is a literal pathspec (GIT_LITERAL_PATHSPECS, gitEnv):
	// no magic, no glob.
	out, err := g.run(ctx, cache, nil, 0, "ls-tree", "-l", "--end-of-options", commit, "--", path)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	// <mode> SP <type> SP <object> SP+ <size> TAB <path>
	meta, name, _ := strings.Cut(strings.TrimSuffix(string(out), "\n"), "\t")
	f := strings.Fields(meta)
	if name != path || len(f) != 4 {
		return nil, fmt.Errorf("git: %s at %s: unexpected listing %q", path, commit, oneLine(string(out)))
	}
	if mode, oid := f[0], f[2]; (mode != "100644" && mode != "100755") || !isObjectID(oid) {
		return nil, fmt.Errorf("git: %s at %s is not a regular file (mode %s, %s)", path, commit, mode, f[1])
	}
	size, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("git: the size of %s: %w", path, err)
	}
	if size > max {
		return nil, fmt.Errorf("git: %s at %s: larger than %d bytes", path, commit, max)
	}
	return g.run(ctx, cache, nil, 0, "cat-file", "blob", "--end-of-options", f[2])
}

// reachable is the health check of a git source without a HealthURL: the
// repository answers for the ref again.
func (g *gitFetcher) reachable(ctx context.Context, r gitRepo) error {
	if err := r.check(); err != nil {
		return err
	}
	cache, err := g.cacheFor(ctx, r)
	if err != nil {
		return err
	}
	_, err = g.run(ctx, cache, &r, 0, "ls-remote", "-q", "--end-of-options", r.url, r.ref)
	return err
}

// check refuses what the model would refuse: the IntentSource's fields are
// checked again right before git sees them.
func (r gitRepo) check() error {
	for _, c := range []struct{ field, value, why string }{
		{"RepoURL", r.url, model.CheckGitURL(r.url)},
		{"Path", r.path, model.CheckRepoPath(r.path)},
		{"TargetRevision", r.ref, model.CheckGitRef(r.ref)},
	} {
		if c.why != "" {
			return fmt.Errorf("git: %s %q refused: not %s", c.field, c.value, c.why)
		}
	}
	return nil
}

// isObjectID reports a SHA-1 object id (a commit's, or a blob's) in hex.
func isObjectID(s string) bool {
	return len(s) == 40 && strings.Trim(s, "0123456789abcdef") == ""
}

// run runs git with args in cache (its repository repo.git), its
// environment and configuration gitEnv's, and answers its output. r, for
// runs that reach the repository, limits the protocols to r's and gives
// its credentials and CAs; maxSize > 0 kills git once the cache holds more
// bytes. Git's process group is killed at the timeout.
func (g *gitFetcher) run(ctx context.Context, cache string, r *gitRepo, maxSize int64, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	env, err := gitEnv(cache, r)
	if err != nil {
		return nil, err
	}
	full := append([]string{"--git-dir=" + filepath.Join(cache, "repo.git")}, args...)
	cmd := exec.CommandContext(ctx, g.program, full...)
	cmd.Env, cmd.Dir = env, cache
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	stdout := &cappedBuffer{max: maxGitStdout}
	stderr := &tailBuffer{max: maxGitStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git: %w", err)
	}
	// tooLarge is the cache's size once it was found over maxSize (0:
	// not), set by the watcher before it closes watched.
	var tooLarge int64
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if maxSize <= 0 {
			return
		}
		t := time.NewTicker(sizeCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if size, err := dirSize(cache); err == nil && size > maxSize {
				tooLarge = size
				cancel()
				return
			}
		}
	}()
	err = cmd.Wait()
	cancel()
	<-watched
	if maxSize > 0 && tooLarge == 0 {
		if size, serr := dirSize(cache); serr == nil && size > maxSize {
			tooLarge = size
		}
	}
	what := "git " + args[0]
	if r != nil {
		what += " " + redact(r.url)
	}
	if tooLarge > 0 {
		os.RemoveAll(filepath.Join(cache, "repo.git"))
		return nil, fmt.Errorf("%s: the repository is too large: more than %d bytes fetched (%d); it was removed", what, maxSize, tooLarge)
	}
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s: killed after %v", what, g.timeout)
	}
	if stdout.over {
		return nil, fmt.Errorf("%s: more than %d bytes of output", what, maxGitStdout)
	}
	if err != nil {
		msg := oneLine(stderr.String())
		switch {
		case strings.Contains(msg, "certificate"):
			msg += " (the server's certificate is not signed by " + caWho(r) + ")"
		case strings.Contains(msg, "could not read Username") && r != nil && r.authHeader != "":
			msg += " (the server refused the IntentSource's Username and Password)"
		case strings.Contains(msg, "could not read Username"):
			msg += " (the server asks for credentials: give the IntentSource's Username and Password)"
		}
		return nil, fmt.Errorf("%s: %v: %s", what, err, msg)
	}
	return stdout.Bytes(), nil
}

// caWho names the CAs a repository's server is checked with.
func caWho(r *gitRepo) string {
	if r != nil && r.caPEM != nil {
		return "the IntentSource's CACertificates"
	}
	return "a CA the system trusts"
}

// gitEnv is git's whole environment: nothing of swmgr's own, no system or
// user configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL), no prompt,
// and the configuration given through GIT_CONFIG_COUNT (not on the
// command line, which every user of the host can read): hooks off, no
// credential helper, no redirect, fsck on what is received, no automatic
// gc; for r, only r's protocol allowed, its CAs (a file in the cache,
// public) and its Authorization header.
func gitEnv(cache string, r *gitRepo) ([]string, error) {
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + cache, "LANG=C", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_NO_REPLACE_OBJECTS=1", "GIT_LITERAL_PATHSPECS=1",
		"GIT_ALLOW_PROTOCOL=none"}
	cfg := [][2]string{
		{"protocol.allow", "never"},
		{"core.hooksPath", "/dev/null"},
		{"core.fsmonitor", "false"},
		{"credential.helper", ""},
		{"http.followRedirects", "false"},
		{"http.sslVerify", "true"},
		{"transfer.fsckObjects", "true"},
		{"gc.auto", "0"},
		{"maintenance.auto", "false"},
		{"protocol.version", "2"},
	}
	if r != nil {
		u, err := url.Parse(r.url)
		if err != nil || model.CheckGitURL(r.url) != "" {
			return nil, fmt.Errorf("git: RepoURL %q refused: not %s", r.url, model.CheckGitURL(r.url))
		}
		env[len(env)-1] = "GIT_ALLOW_PROTOCOL=" + u.Scheme
		cfg = append(cfg, [2]string{"protocol." + u.Scheme + ".allow", "always"})
		if r.caPEM != nil {
			ca := filepath.Join(cache, "ca.pem")
			if err := os.WriteFile(ca, r.caPEM, 0o600); err != nil {
				return nil, fmt.Errorf("git: the CA file: %w", err)
			}
			cfg = append(cfg, [2]string{"http.sslCAInfo", ca}, [2]string{"http.sslCAPath", ""})
		}
		if r.authHeader != "" && u.Scheme == "https" {
			cfg = append(cfg, [2]string{"http.extraHeader", "Authorization: " + r.authHeader})
		}
	}
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(cfg)))
	for i, kv := range cfg {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env, nil
}

// basicAuth is an HTTP basic Authorization header's value.
func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// caPEM is certificates (each base64 DER, as CACertificates holds them)
// in PEM, for git's http.sslCAInfo.
func caPEM(certs []string) ([]byte, error) {
	var out []byte
	for _, c := range certs {
		der, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			return nil, fmt.Errorf("CACertificates: %w", err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out, nil
}

// redact is a URL without user information (a RepoURL has none; a
// message must not show one anyway).
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "the repository"
}

// oneLine is git's messages as one line of printable text for a state.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if model.IsLineBreaking(r) {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
	return strings.Join(strings.Fields(s), " ")
}

// cappedBuffer keeps what is written to it up to max bytes; past that it
// refuses the write (git sees a broken pipe) and says so.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

var errOutputBound = errors.New("output over its bound")

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		c.over = true
		return 0, errOutputBound
	}
	return c.Buffer.Write(p)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// dirSize is the bytes of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // git renames and removes as it goes
			}
			return err
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n, err
}
