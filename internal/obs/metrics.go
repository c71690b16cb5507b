package obs

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/codes"
)

// Metrics holds swmgr's Prometheus metrics in a registry of its own (no
// global state).
type Metrics struct {
	reg *prometheus.Registry

	requests      *prometheus.HistogramVec // class, method, code
	responseBytes *prometheus.CounterVec   // class
	commits       *prometheus.HistogramVec // result
	commitObjects prometheus.Histogram
	batchSize     prometheus.Histogram
	fsync         prometheus.Histogram
	backendApply  *prometheus.HistogramVec // result
	loginFailures prometheus.Counter
	lockouts      prometheus.Counter
	archives      *prometheus.CounterVec   // result
	gnmiRPCs      *prometheus.HistogramVec // method, code
	gnmiSubs      *prometheus.GaugeVec     // mode

	// gnmiObservers caches the observer of each (method, code): made at
	// the first RPC of the pair, so that only the pairs seen are exposed.
	gnmiObservers [len(gnmiMethods) + 1][gnmiCodes]atomic.Pointer[observerBox]

	// Observers of one (class, method, code) are cached: resolving label
	// values on every request would cost more than the observation. The
	// map is never modified once published: a new combination publishes
	// a copy (under mu), so a request reads it without a lock.
	mu        sync.Mutex
	observers atomic.Pointer[map[requestLabels]requestObservers]
}

type requestLabels struct {
	class, method string
	code          int
}

type requestObservers struct {
	latency prometheus.Observer
	bytes   prometheus.Counter
}

// latencyBuckets span a cached GET (tens of µs) to a slow backend (seconds).
var latencyBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics makes the metrics, with the Go runtime's and the process's.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.observers.Store(&map[requestLabels]requestObservers{})
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "swmgr_http_request_duration_seconds", Help: "HTTP requests by route class, method and status code, and how long they took.",
		Buckets: latencyBuckets,
	}, []string{"class", "method", "code"})
	m.responseBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "swmgr_http_response_bytes_total", Help: "Bytes of response bodies sent, by route class.",
	}, []string{"class"})
	m.commits = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "swmgr_commit_duration_seconds", Help: "Commits (every write, candidate commit, rollback), from request to durable, by result (ok, error).",
		Buckets: latencyBuckets,
	}, []string{"result"})
	m.commitObjects = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "swmgr_commit_objects", Help: "Objects changed by each successful commit.",
		Buckets: []float64{0, 1, 2, 4, 8, 16, 64, 256, 1024, 4096},
	})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "swmgr_store_batch_size", Help: "Commits written to disk together by one group commit.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
	})
	m.fsync = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "swmgr_store_fsync_seconds", Help: "Time to write and fsync one group commit.",
		Buckets: latencyBuckets,
	})
	m.backendApply = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "swmgr_backend_apply_seconds", Help: "Time the switch backend took to apply a commit's changes, by result (ok, error).",
		Buckets: latencyBuckets,
	}, []string{"result"})
	m.loginFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "swmgr_login_failures_total", Help: "Requests refused because their credentials were wrong.",
	})
	m.lockouts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "swmgr_login_lockouts_total", Help: "Lockouts started after repeated login failures of one user name from one address.",
	})
	m.archives = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "swmgr_archive_uploads_total", Help: "Configuration archive uploads, by result.",
	}, []string{"result"})
	m.gnmiRPCs = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "swmgr_gnmi_rpc_duration_seconds", Help: "gNMI RPCs by method and gRPC status code, and how long they took (a Subscribe, from its start to its end).",
		Buckets: latencyBuckets,
	}, []string{"method", "code"})
	m.gnmiSubs = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "swmgr_gnmi_subscriptions", Help: "gNMI Subscribe streams open now, by mode (stream, once, poll).",
	}, []string{"mode"})
	for _, mode := range [...]string{"stream", "once", "poll"} {
		m.gnmiSubs.WithLabelValues(mode) // 0 until one opens
	}
	m.reg.MustRegister(m.requests, m.responseBytes, m.commits, m.commitObjects, m.batchSize, m.fsync, m.backendApply,
		m.loginFailures, m.lockouts, m.archives, m.gnmiRPCs, m.gnmiSubs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where the metrics live, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

func (m *Metrics) request(class, method string, code int, took time.Duration, bytes int64) {
	k := requestLabels{class, method, code}
	o, ok := (*m.observers.Load())[k]
	if !ok {
		if !knownMethod(method) {
			k.method = "other" // a client must not grow the label set at will
		}
		o = requestObservers{
			latency: m.requests.WithLabelValues(class, k.method, strconv.Itoa(code)),
			bytes:   m.responseBytes.WithLabelValues(class),
		}
		m.mu.Lock()
		if old := *m.observers.Load(); len(old) < 4096 {
			next := make(map[requestLabels]requestObservers, len(old)+1)
			for l, ob := range old {
				next[l] = ob
			}
			next[requestLabels{class, method, code}] = o
			m.observers.Store(&next)
		}
		m.mu.Unlock()
	}
	o.latency.Observe(took.Seconds())
	o.bytes.Add(float64(bytes))
}

// gnmiMethods are the methods of swmgr_gnmi_rpc_duration_seconds; any
// other is "other".
var gnmiMethods = [...]string{"Capabilities", "Get", "Set", "Subscribe"}

// gnmiCodes bounds the gRPC codes of the label (0 OK .. 16
// Unauthenticated); any other is counted as Unknown.
const gnmiCodes = 17

type observerBox struct{ o prometheus.Observer }

// ObserveGNMI records one gNMI RPC: method is its name without the
// service (Get), code its gRPC status code.
func (m *Metrics) ObserveGNMI(method string, code codes.Code, took time.Duration) {
	mi := len(gnmiMethods)
	for i, name := range gnmiMethods {
		if name == method {
			mi = i
			break
		}
	}
	if code >= gnmiCodes {
		code = codes.Unknown
	}
	slot := &m.gnmiObservers[mi][code]
	box := slot.Load()
	if box == nil {
		name := "other" // a client must not grow the label set at will
		if mi < len(gnmiMethods) {
			name = gnmiMethods[mi]
		}
		box = &observerBox{m.gnmiRPCs.WithLabelValues(name, code.String())}
		slot.Store(box) // two at once store the same series
	}
	box.o.Observe(took.Seconds())
}

// GNMISubscription counts a Subscribe stream of mode (stream, once,
// poll) opened (delta 1) or ended (-1).
func (m *Metrics) GNMISubscription(mode string, delta int) {
	m.gnmiSubs.WithLabelValues(mode).Add(float64(delta))
}

// LoginFailure counts a request refused for wrong credentials, by a front
// end that is not the HTTP handler Wrap wraps (gNMI).
func (m *Metrics) LoginFailure() { m.loginFailures.Inc() }

func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodPut:
		return true
	}
	return false
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// ObserveCommit records one commit (an engine.CommitObserver).
func (m *Metrics) ObserveCommit(took time.Duration, changes int, err error) {
	m.commits.WithLabelValues(result(err)).Observe(took.Seconds())
	if err == nil {
		m.commitObjects.Observe(float64(changes))
	}
}

// ObserveBatch records one group commit (a store.BatchObserver).
func (m *Metrics) ObserveBatch(batch int, sync time.Duration) {
	m.batchSize.Observe(float64(batch))
	m.fsync.Observe(sync.Seconds())
}

// Lockout records a login lockout (auth.ThrottleOptions.OnLockout).
func (m *Metrics) Lockout(time.Duration) { m.lockouts.Inc() }

// ArchiveUpload records one configuration archive upload; result is "ok"
// or a short failure class ("unreachable", "auth", "error").
func (m *Metrics) ArchiveUpload(result string) { m.archives.WithLabelValues(result).Inc() }

// ObserveApply records one hand-over of commits to the backend (an
// engine.ApplyObserver): one observation per batch of commits the engine
// applies at once (one commit when nothing was grouped).
func (m *Metrics) ObserveApply(took time.Duration, err error) {
	m.backendApply.WithLabelValues(result(err)).Observe(took.Seconds())
}
