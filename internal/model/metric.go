package model

// Metrics says how the objects of a kind appear in Prometheus's
// exposition: each state field that declares a Metric becomes the series
// swmgr_<Subsystem>_<Metric.Name>, labelled by Labels, with the field's
// Doc as its HELP (node_exporter's and frr_exporter's conventions: base
// units, counters ending in _total).
type Metrics struct {
	Subsystem string        // port, bgp_peer, ntp_source
	Labels    []MetricLabel // the fields that tell the series apart
	Doc       string        // what one object is, the start of every HELP
}

// MetricLabel is one label of a kind's series: the value of Field.
type MetricLabel struct {
	Field string
	Label string
}

// Metric exports one state field.
type Metric struct {
	// Name after the subsystem, in base units: receive_bytes_total,
	// offset_seconds. For a Record field, the prefix of one series per
	// integer inside it (messages -> messages_received_update_total).
	Name    string
	Counter bool    // a counter (Name ends in _total); else a gauge
	Scale   float64 // the value times Scale (1e-6: microseconds to seconds); 0 is 1
	// Is, for a string field, makes the series 1 while the field has this
	// value and 0 otherwise (OperState UP). A string field without it
	// holds a Go duration (1h2m3s), exported in seconds.
	Is string
	// Len, for a list field, exports how many entries it holds (a LAG's
	// members up in the bundle).
	Len bool
	// Present, for a string field, makes the series 1 while the field
	// holds anything and 0 while it is empty (a port's LLDP neighbour).
	Present bool
}
