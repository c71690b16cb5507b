package test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var dashboardPicture = flag.Bool("dashboard-picture", false, "TestGrafanaDashboardQueries draws the latest values of each panel into docs/grafana/swmgr-dashboard.svg")

// dashboard is what the tests read of a Grafana dashboard: its panels'
// queries and its query variables.
type dashboard struct {
	panels []dashboardPanel
	// variables maps a variable's name to its query (label_values(...)).
	variables map[string]string
}

type dashboardPanel struct {
	title   string
	targets []dashboardTarget
}

type dashboardTarget struct {
	expr, legend string
}

func readDashboard(t *testing.T, file string) *dashboard {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Templating struct {
			List []struct {
				Name  string
				Type  string
				Query struct{ Query string }
			}
		}
		Panels []struct {
			Type    string
			Title   string
			Targets []struct{ Expr, LegendFormat string }
		}
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	d := &dashboard{variables: map[string]string{}}
	for _, v := range raw.Templating.List {
		if v.Type == "query" {
			d.variables[v.Name] = v.Query.Query
		}
	}
	for _, p := range raw.Panels {
		if p.Type == "row" {
			continue
		}
		dp := dashboardPanel{title: p.Title}
		for _, tg := range p.Targets {
			dp.targets = append(dp.targets, dashboardTarget{expr: tg.Expr, legend: tg.LegendFormat})
		}
		d.panels = append(d.panels, dp)
	}
	return d
}

// queries are the expressions of every panel, in order.
func (d *dashboard) queries() []string {
	var q []string
	for _, p := range d.panels {
		for _, tg := range p.targets {
			q = append(q, tg.expr)
		}
	}
	return q
}

// legendLabel is a label in a legend format: {{port}}.
var legendLabel = regexp.MustCompile(`\{\{\s*\w+\s*\}\}`)

var dashboardVariable = regexp.MustCompile(`\$(\w+)`)

// expand replaces the variables of expr by their values, as Grafana does
// (a multi-value variable at All becomes its allValue, .*).
func (d *dashboard) expand(expr string, values map[string]string) string {
	return dashboardVariable.ReplaceAllStringFunc(expr, func(v string) string {
		if val, ok := values[v[1:]]; ok {
			return val
		}
		return v
	})
}

// promSeries is one series of an instant query's result.
type promSeries struct {
	Metric map[string]string
	Value  [2]any // time, value as a string
}

func (s promSeries) value() float64 {
	text, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// promAPI is the address of a Prometheus web API.
type promAPI string

// query runs an instant query.
func (p promAPI) query(expr string) ([]promSeries, error) {
	resp, err := http.Get("http://" + string(p) + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Error  string
		Data   struct{ Result []promSeries }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, r.Error)
	}
	return r.Data.Result, nil
}

// picture draws, as SVG, every panel's latest values per instance: one
// bar per query and instance, the query's value when it has one series
// there, else its largest value and how many series it has (a port panel
// has one per port). results holds the series of d.queries(), in order.
func (d *dashboard) picture(results [][]promSeries, instances []string) []byte {
	const (
		width, colWidth, labelWidth, barWidth = 1200, 600, 260, 150
		lineHeight, titleHeight, gap          = 16, 22, 14
	)
	colours := []string{"#3274d9", "#e0752d", "#56a64b", "#a352cc"}
	var body bytes.Buffer
	heights := [2]int{56, 56} // the two columns fill up side by side
	i := 0
	for _, p := range d.panels {
		col := 0
		if heights[1] < heights[0] {
			col = 1
		}
		x, y := col*colWidth+10, heights[col]
		top := y
		fmt.Fprintf(&body, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", x, y+14, html.EscapeString(p.title))
		y += titleHeight
		// The bars of one panel share its scale.
		largest := 0.0
		for k := range p.targets {
			for _, s := range results[i+k] {
				if v := math.Abs(s.value()); v > largest && !math.IsInf(v, 0) {
					largest = v
				}
			}
		}
		for k, tg := range p.targets {
			for n, in := range instances {
				count, top := 0, math.Inf(-1)
				var labels map[string]string
				for _, s := range results[i+k] {
					if s.Metric["instance"] == in {
						count++
						top = math.Max(top, s.value())
						labels = s.Metric
					}
				}
				if count > 1 {
					labels = map[string]string{"instance": in}
				}
				legend := legendLabel.ReplaceAllStringFunc(tg.legend, func(l string) string { return labels[strings.TrimSpace(l[2:len(l)-2])] })
				text := "no series"
				bar := 0
				if count > 0 {
					text = strconv.FormatFloat(top, 'g', 4, 64)
					if count > 1 {
						text = fmt.Sprintf("max %s (%d series)", text, count)
					}
					if largest > 0 && !math.IsNaN(top) {
						bar = int(math.Round(math.Abs(top) / largest * barWidth))
					}
				}
				fmt.Fprintf(&body, `<text x="%d" y="%d">%s</text>`, x, y+12, html.EscapeString(strings.Join(strings.Fields(legend), " ")))
				fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, x+labelWidth, y+2, bar, lineHeight-4, colours[n%len(colours)])
				fmt.Fprintf(&body, `<text x="%d" y="%d">%s</text>`+"\n", x+labelWidth+bar+6, y+12, html.EscapeString(text))
				y += lineHeight
			}
		}
		i += len(p.targets)
		fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>`+"\n", x-6, top-4, colWidth-8, y-top+8)
		heights[col] = y + gap
	}
	height := heights[0]
	if heights[1] > height {
		height = heights[1]
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&out, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&out, `<text x="10" y="22" font-size="16" font-weight="bold">docs/grafana/swmgr-dashboard.json: the latest value of each query, per switch</text>`+"\n")
	fmt.Fprintf(&out, `<text x="10" y="42">Prometheus scraping %d swmgr (TestGrafanaDashboardQueries): %s</text>`+"\n", len(instances), html.EscapeString(strings.Join(instances, ", ")))
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	return out.Bytes()
}
