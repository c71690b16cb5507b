package gnoi

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	hpb "github.com/openconfig/gnoi/healthz"
	"github.com/openconfig/gnoi/types"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/swmgr/swmgr/internal/model"
)

// BundleID is the one artifact Healthz serves: a debug bundle (a gzipped
// tar of versions, the daemons' states, the running configuration as
// REST reads it, the config log's last entries and the daemons' logs'
// ends), built when it is asked for.
const BundleID = "debug-bundle"

// Bounds of the bundle's parts.
const (
	bundleLogTail    = 1 << 20 // the last bytes of each daemon log
	bundleConfigLogs = 500     // config log entries
	bundleObjects    = 100000  // objects of one kind
)

// component is one part of swmgr whose health Healthz reports.
type component struct {
	name    string
	healthy bool
	why     string
}

// health builds the components' statuses.
type health struct{ s *Server }

// components lists swmgr's parts: the service, its store, the dataplane
// and each daemon it supervises.
func (h *health) components() []component {
	out := []component{{name: "swmgr", healthy: true}}
	store := component{name: "store", healthy: true}
	select {
	case <-h.s.o.Engine.Closing():
		store.healthy, store.why = false, "the engine is closing"
	default:
	}
	out = append(out, store, component{name: "dataplane-" + h.s.o.Backend, healthy: true})
	if h.s.o.Daemons != nil {
		for _, d := range h.s.o.Daemons() {
			out = append(out, component{name: d.Name, healthy: d.State == "up", why: d.State})
		}
	}
	return out
}

func componentPath(name string) *types.Path {
	return &types.Path{Origin: "openconfig", Elem: []*types.PathElem{{Name: "components"}, {Name: "component", Key: map[string]string{"name": name}}}}
}

func (c component) status(now time.Time) *hpb.ComponentStatus {
	st := hpb.Status_STATUS_HEALTHY
	if !c.healthy {
		st = hpb.Status_STATUS_UNHEALTHY
	}
	return &hpb.ComponentStatus{
		Path: componentPath(c.name), Status: st, Id: c.name + "-" + now.UTC().Format("20060102T150405Z"),
		Created:   timestamppb.New(now),
		Artifacts: []*hpb.ArtifactHeader{bundleHeader(-1, nil)},
	}
}

// bundleHeader describes the debug bundle (size -1: not built yet).
func bundleHeader(size int64, sum []byte) *hpb.ArtifactHeader {
	f := &hpb.FileArtifactType{Name: "swmgr-debug.tar.gz", Mimetype: "application/gzip", Size: size}
	if sum != nil {
		f.Hash = &types.HashType{Method: types.HashType_SHA256, Hash: sum}
	}
	return &hpb.ArtifactHeader{Id: BundleID, ArtifactType: &hpb.ArtifactHeader_File{File: f}}
}

// componentName is the component a path names: the empty path and
// /components the whole switch (""), /components/component[name=X] X.
func componentName(p *types.Path) (string, error) {
	el := p.GetElem()
	switch {
	case len(el) == 0, len(el) == 1 && el[0].GetName() == "components":
		return "", nil
	case len(el) == 2 && el[0].GetName() == "components" && el[1].GetName() == "component" && el[1].GetKey()["name"] != "":
		return el[1].GetKey()["name"], nil
	}
	return "", invalid("path: give /components/component[name=NAME]")
}

// healthzServer is Healthz.
type healthzServer struct {
	hpb.UnimplementedHealthzServer
	s *Server
}

// Get reports a component, or the switch with every component under it.
func (h healthzServer) Get(ctx context.Context, r *hpb.GetRequest) (*hpb.GetResponse, error) {
	name, err := componentName(r.GetPath())
	if err != nil {
		return nil, err
	}
	now := time.Now()
	cs := h.s.hz.components()
	if name == "" {
		root := cs[0].status(now)
		for _, c := range cs[1:] {
			sub := c.status(now)
			root.Subcomponents = append(root.Subcomponents, sub)
			if sub.Status != hpb.Status_STATUS_HEALTHY {
				root.Status = hpb.Status_STATUS_UNHEALTHY
			}
		}
		return &hpb.GetResponse{Component: root}, nil
	}
	for _, c := range cs {
		if c.name == name {
			return &hpb.GetResponse{Component: c.status(now)}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "no component %q: %s", name, names(cs))
}

func names(cs []component) string {
	var n []string
	for _, c := range cs {
		n = append(n, c.name)
	}
	return fmt.Sprint(n)
}

// List reports every component (or the one the path names).
func (h healthzServer) List(ctx context.Context, r *hpb.ListRequest) (*hpb.ListResponse, error) {
	name, err := componentName(r.GetPath())
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := &hpb.ListResponse{}
	for _, c := range h.s.hz.components() {
		if name == "" || c.name == name {
			out.Statuses = append(out.Statuses, c.status(now))
		}
	}
	if len(out.Statuses) == 0 {
		return nil, status.Errorf(codes.NotFound, "no component %q", name)
	}
	return out, nil
}

// Artifact streams the debug bundle: its header (size and SHA-256), its
// bytes in chunks, the trailer.
func (h healthzServer) Artifact(r *hpb.ArtifactRequest, stream hpb.Healthz_ArtifactServer) error {
	if r.GetId() != BundleID {
		return status.Errorf(codes.NotFound, "no artifact %q: the one artifact is %q", r.GetId(), BundleID)
	}
	b, err := h.s.hz.bundle(stream.Context())
	if err != nil {
		return status.Errorf(codes.Internal, "debug bundle: %v", err)
	}
	sum := sha256.Sum256(b)
	if err := stream.Send(&hpb.ArtifactResponse{Contents: &hpb.ArtifactResponse_Header{Header: bundleHeader(int64(len(b)), sum[:])}}); err != nil {
		return err
	}
	for len(b) > 0 {
		n := min(chunk, len(b))
		if err := stream.Send(&hpb.ArtifactResponse{Contents: &hpb.ArtifactResponse_Bytes{Bytes: b[:n]}}); err != nil {
			return err
		}
		b = b[n:]
	}
	return stream.Send(&hpb.ArtifactResponse{Contents: &hpb.ArtifactResponse_Trailer{Trailer: &hpb.ArtifactTrailer{}}})
}

// Acknowledge and Check: swmgr keeps no event history to acknowledge or
// check again (its components' health is read when asked).
func (h healthzServer) Acknowledge(context.Context, *hpb.AcknowledgeRequest) (*hpb.AcknowledgeResponse, error) {
	return nil, status.Error(codes.Unimplemented, "Acknowledge: swmgr keeps no health events; Get reads the components' health now")
}

func (h healthzServer) Check(context.Context, *hpb.CheckRequest) (*hpb.CheckResponse, error) {
	return nil, status.Error(codes.Unimplemented, "Check: swmgr keeps no health events; Get reads the components' health now")
}

// bundle builds the debug bundle. The configuration is read as REST reads
// it (no secret is ever returned by a read), the config log as its reads
// answer (redacted when written).
func (h *health) bundle(ctx context.Context) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	now := time.Now()
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: now}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	eng := h.s.o.Engine
	version := fmt.Sprintf("swmgr %s\n%s %s/%s\nbackend %s\nrevision %d\ntime %s\n", h.s.o.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, h.s.o.Backend, eng.Revision(), now.UTC().Format(time.RFC3339))
	if err := add("version.txt", []byte(version)); err != nil {
		return nil, err
	}
	var daemons any = []any{}
	if h.s.o.Daemons != nil {
		daemons = h.s.o.Daemons()
	}
	comps := map[string]any{"components": h.componentsJSON(), "daemons": daemons}
	if err := addJSON(add, "health.json", comps); err != nil {
		return nil, err
	}
	cfg := []byte{'{'}
	first := true
	for _, k := range eng.Registry().Kinds() {
		if k.Class != model.Config {
			continue
		}
		page, err := eng.List(ctx, k, 0, bundleObjects, false, nil)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", k.Name, err)
		}
		if !first {
			cfg = append(cfg, ',')
		}
		first = false
		name, _ := json.Marshal(k.Name)
		cfg = append(append(append(cfg, name...), ':'), page...)
	}
	cfg = append(cfg, '}')
	if err := add("running-config.json", cfg); err != nil {
		return nil, err
	}
	clog, err := eng.ListLog(0, bundleConfigLogs, nil)
	if err == nil {
		err = add("config-log.json", clog)
	}
	if err != nil {
		return nil, err
	}
	var logs []string
	for _, d := range h.s.o.LogDirs {
		found, _ := filepath.Glob(filepath.Join(d, "*.log"))
		logs = append(logs, found...)
	}
	for _, l := range logs {
		tail, err := readTail(l, bundleLogTail)
		if err != nil {
			tail = []byte(err.Error() + "\n")
		}
		if err := add("logs/"+filepath.Base(l), tail); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func addJSON(add func(string, []byte) error, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return add(name, b)
}

func (h *health) componentsJSON() []map[string]any {
	var out []map[string]any
	for _, c := range h.components() {
		out = append(out, map[string]any{"name": c.name, "healthy": c.healthy, "state": c.why})
	}
	return out
}

// readTail reads the last n bytes of the file at p.
func readTail(p string, n int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > n {
		if _, err := f.Seek(fi.Size()-n, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, n))
}
