package obs

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
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
	Log       *slog.Logger
}

// Watch registers the gauges read from src, and the operational counters
// of every discovered kind (the ports): each integer field of the state
// form becomes swmgr_<kind>_<field>{<key>=...} and each enumerated one
// swmgr_<kind>_<field>{<key>=..., <field>=<value>} 1, so a switch needs no
// separate exporter.
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
	if src.Registry != nil && src.ListState != nil {
		for _, k := range src.Registry.Kinds() {
			if k.Discovered && len(k.Keys()) == 1 && len(k.StateOnly) > 0 {
				m.reg.MustRegister(newStateCollector(k, src))
			}
		}
	}
}

// stateCollector exports a discovered kind's state forms.
type stateCollector struct {
	kind   *model.Kind
	src    Source
	keyTag string
	descs  map[string]*prometheus.Desc // field name -> metric
}

func newStateCollector(k *model.Kind, src Source) *stateCollector {
	c := &stateCollector{kind: k, src: src, keyTag: snake(k.Keys()[0].Name), descs: map[string]*prometheus.Desc{}}
	prefix := "swmgr_" + snake(k.Name) + "_"
	for _, f := range k.StateOnly {
		help := f.Doc
		if help == "" {
			help = f.Name
		}
		switch {
		case f.Type == model.Int:
			c.descs[f.Name] = prometheus.NewDesc(prefix+snake(f.Name), k.Name+" state "+f.Name+": "+help+".", []string{c.keyTag}, nil)
		case f.Type == model.String && len(f.Enum) > 0:
			c.descs[f.Name] = prometheus.NewDesc(prefix+snake(f.Name), k.Name+" state "+f.Name+" ("+strings.Join(f.Enum, ", ")+"): 1 for the current value.", []string{c.keyTag, snake(f.Name)}, nil)
		}
	}
	return c
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := c.kind.Keys()[0].Name
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
			Objects    []struct{ Object map[string]json.RawMessage }
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return
		}
		for _, o := range page.Objects {
			var name string
			json.Unmarshal(o.Object[key], &name)
			for field, desc := range c.descs {
				raw, ok := o.Object[field]
				if !ok {
					continue
				}
				f := c.kind.Field(field)
				if f == nil {
					f = c.stateField(field)
				}
				if f.Type == model.Int {
					var v float64
					if json.Unmarshal(raw, &v) == nil {
						ch <- prometheus.MustNewConstMetric(desc, prometheus.UntypedValue, v, name)
					}
					continue
				}
				var v string
				if json.Unmarshal(raw, &v) == nil && v != "" {
					ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, name, v)
				}
			}
		}
		if !page.MoreExist || page.NextMarker == marker {
			return
		}
		marker = page.NextMarker
	}
}

func (c *stateCollector) stateField(name string) *model.Field {
	for _, f := range c.kind.StateOnly {
		if f.Name == name {
			return f
		}
	}
	return nil
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
