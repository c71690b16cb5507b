package obs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/swmgr/swmgr/internal/model"
)

// Source is what the metrics read from the running service at scrape
// time. Each function may be nil.
type Source struct {
	Registry    *model.Registry
	Revision    func() uint64
	Candidates  func() int
	Subscribers func() int
	// ListState appends one page of the state forms of kind k, in the
	// REST list form.
	ListState func(ctx context.Context, k *model.Kind, marker uint64, count int) ([]byte, error)
	// Confirmation reads the commit awaiting confirmation: its revision
	// and deadline, ok false when there is none.
	Confirmation func() (rev uint64, deadline time.Time, ok bool)
	Log          *slog.Logger
}

// Watch registers the gauges read from src, the state of the commit
// awaiting confirmation, and the series of every kind the model exports
// (model.Kind.Metrics: ports, BGP sessions, NTP sources), read at scrape
// time, so a switch needs no separate exporter.
func (m *Metrics) Watch(src Source) {
	if src.Revision != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "swmgr_revision", Help: "The running configuration's revision."},
			func() float64 { return float64(src.Revision()) }))
	}
	if src.Candidates != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "swmgr_candidates", Help: "Open candidate configurations."},
			func() float64 { return float64(src.Candidates()) }))
	}
	if src.Subscribers != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "swmgr_event_subscribers", Help: "Clients of the change feed (/public/v1/events) attached now."},
			func() float64 { return float64(src.Subscribers()) }))
	}
	if src.Confirmation != nil {
		m.reg.MustRegister(confirmCollector{src.Confirmation})
	}
	if src.Registry != nil && src.ListState != nil {
		for _, k := range src.Registry.Kinds() {
			if k.Metrics != nil {
				m.reg.MustRegister(newStateCollector(k, src))
			}
		}
	}
}

var (
	confirmPendingDesc  = prometheus.NewDesc("swmgr_commit_confirm_pending", "1 while a commit awaits confirmation (apply confirmed, ?Confirm=): without one before its deadline it is rolled back; else 0.", nil, nil)
	confirmRevisionDesc = prometheus.NewDesc("swmgr_commit_confirm_revision", "The revision of the commit awaiting confirmation (0: none).", nil, nil)
	confirmDeadlineDesc = prometheus.NewDesc("swmgr_commit_confirm_deadline_timestamp_seconds", "When the commit awaiting confirmation is rolled back unless confirmed, as a Unix time (0: none).", nil, nil)
)

// confirmCollector exports the commit awaiting confirmation.
type confirmCollector struct {
	read func() (rev uint64, deadline time.Time, ok bool)
}

func (c confirmCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- confirmPendingDesc
	ch <- confirmRevisionDesc
	ch <- confirmDeadlineDesc
}

func (c confirmCollector) Collect(ch chan<- prometheus.Metric) {
	rev, deadline, ok := c.read()
	pending, at := 0.0, 0.0
	if ok {
		pending, at = 1, float64(deadline.UnixNano())/1e9
	}
	ch <- prometheus.MustNewConstMetric(confirmPendingDesc, prometheus.GaugeValue, pending)
	ch <- prometheus.MustNewConstMetric(confirmRevisionDesc, prometheus.GaugeValue, float64(rev))
	ch <- prometheus.MustNewConstMetric(confirmDeadlineDesc, prometheus.GaugeValue, at)
}

// series is one exported value of a state object: a field, or an integer
// inside a record field.
type series struct {
	desc   *prometheus.Desc
	typ    prometheus.ValueType
	path   []string // field, then sub-fields
	metric *model.Metric
	field  *model.Field
}

// stateCollector exports the state of a kind that declares Metrics.
type stateCollector struct {
	kind   *model.Kind
	src    Source
	series []series
}

func newStateCollector(k *model.Kind, src Source) *stateCollector {
	c := &stateCollector{kind: k, src: src}
	var labels []string
	for _, l := range k.Metrics.Labels {
		labels = append(labels, l.Label)
	}
	prefix := "swmgr_" + k.Metrics.Subsystem + "_"
	for _, f := range append(append([]*model.Field(nil), k.Fields...), k.StateOnly...) {
		mt := f.Metric
		if mt == nil {
			continue
		}
		typ := prometheus.GaugeValue
		if mt.Counter {
			typ = prometheus.CounterValue
		}
		if f.Type == model.Record {
			var walk func(path []string, sub []*model.Field)
			walk = func(path []string, sub []*model.Field) {
				for _, sf := range sub {
					p := append(append([]string(nil), path...), sf.Name)
					switch sf.Type {
					case model.Record:
						walk(p, sf.Sub)
					case model.Int:
						name := strings.TrimSuffix(mt.Name, "_total")
						for _, e := range p[1:] {
							name += "_" + snake(e)
						}
						if mt.Counter {
							name += "_total"
						}
						help := fmt.Sprintf("%s: %s, %s (%s %s).", k.Metrics.Doc, f.Doc, strings.ToLower(strings.Join(p[1:], " ")), k.StateName(), strings.Join(p, "."))
						c.series = append(c.series, series{desc: prometheus.NewDesc(prefix+name, help, labels, nil), typ: typ, path: p, metric: mt, field: sf})
					}
				}
			}
			walk([]string{f.Name}, f.Sub)
			continue
		}
		c.series = append(c.series, series{desc: prometheus.NewDesc(prefix+mt.Name, metricHelp(k, f), labels, nil), typ: typ, path: []string{f.Name}, metric: mt, field: f})
	}
	return c
}

// metricHelp is a series' HELP: what the object is, what the field says
// (its Doc, the names of its values), its name in the REST state form.
func metricHelp(k *model.Kind, f *model.Field) string {
	doc := f.Doc
	if doc == "" {
		doc = f.Name
	}
	if len(f.Names) > 0 {
		var names []string
		for i, n := range f.Names {
			names = append(names, fmt.Sprintf("%d %s", i, n))
		}
		doc += " (" + strings.Join(names, ", ") + ")"
	}
	if f.Metric.Len {
		doc += ", counted"
	}
	if f.Metric.Present {
		doc += "; 1 while there is one"
	}
	if f.Metric.Scale != 0 && f.Metric.Scale != 1 {
		doc += fmt.Sprintf("; exported in base units (x%g)", f.Metric.Scale)
	}
	return fmt.Sprintf("%s: %s (%s %s).", k.Metrics.Doc, doc, k.StateName(), f.Name)
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.series {
		ch <- s.desc
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var marker uint64
	for {
		data, err := c.src.ListState(ctx, c.kind, marker, 1024)
		if err != nil {
			if c.src.Log != nil {
				c.src.Log.Warn("metrics: cannot read state", "kind", c.kind.Name, "err", err)
			}
			return
		}
		var page struct {
			MoreExist  bool
			NextMarker uint64
			Objects    []struct{ Object map[string]any }
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return
		}
		for _, o := range page.Objects {
			labels := make([]string, len(c.kind.Metrics.Labels))
			for i, l := range c.kind.Metrics.Labels {
				labels[i] = fmt.Sprint(o.Object[l.Field])
			}
			for _, s := range c.series {
				var v any = o.Object
				for _, p := range s.path {
					m, _ := v.(map[string]any)
					v = m[p]
				}
				if x, ok := value(v, s.metric); ok {
					ch <- prometheus.MustNewConstMetric(s.desc, s.typ, x, labels...)
				}
			}
		}
		if !page.MoreExist || page.NextMarker == marker {
			return
		}
		marker = page.NextMarker
	}
}

// value is a state value as a metric: numbers scaled, booleans and
// Metric.Is and Metric.Present as 1 or 0, a Go duration in seconds, a
// list's length (Metric.Len).
func value(v any, mt *model.Metric) (float64, bool) {
	scale := mt.Scale
	if scale == 0 {
		scale = 1
	}
	switch x := v.(type) {
	case []any:
		if mt.Len {
			return float64(len(x)), true
		}
		return 0, false
	case float64:
		return x * scale, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		if mt.Present {
			if x != "" {
				return 1, true
			}
			return 0, true
		}
		if mt.Is != "" {
			if x == mt.Is {
				return 1, true
			}
			return 0, true
		}
		d, err := time.ParseDuration(x)
		if err != nil {
			return 0, false
		}
		return d.Seconds() * scale, true
	}
	return 0, false
}

// snake turns a model name into a metric name part: IfInOctets ->
// if_in_octets, IPv4Intf -> ipv4_intf.
func snake(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// Calls counts the REST calls served since start, by operation, as
// SystemStatus reports them (FlexSwitch's NumCreateCalls and the others):
// the REST server counts, the service's status reads.
type Calls struct {
	Create, Delete, Update, Get, Action atomic.Uint64
}
