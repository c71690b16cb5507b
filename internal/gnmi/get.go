package gnmi

import (
	"context"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Capabilities lists the models, the encodings and the commit-confirmed
// extension.
func (s *Server) Capabilities(ctx context.Context, req *gpb.CapabilityRequest) (*gpb.CapabilityResponse, error) {
	models := []*gpb.ModelData{{Name: "swmgr", Organization: "swmgr", Version: s.o.Version}}
	models = append(models, ocModels()...)
	return &gpb.CapabilityResponse{
		SupportedModels:    models,
		SupportedEncodings: []gpb.Encoding{gpb.Encoding_JSON, gpb.Encoding_JSON_IETF},
		GNMIVersion:        "0.10.0",
		Extension:          []*gnmi_ext.Extension{{Ext: &gnmi_ext.Extension_Commit{Commit: &gnmi_ext.Commit{}}}},
	}, nil
}

// checkEncoding refuses an encoding other than JSON and JSON_IETF.
func checkEncoding(e gpb.Encoding) error {
	if e != gpb.Encoding_JSON && e != gpb.Encoding_JSON_IETF {
		return status.Errorf(codes.Unimplemented, "encoding %s is not supported; use JSON or JSON_IETF", e)
	}
	return nil
}

// typedValue wraps a leaf's JSON in the requested encoding.
func typedValue(enc gpb.Encoding, b []byte) *gpb.TypedValue {
	if enc == gpb.Encoding_JSON_IETF {
		return &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: b}}
	}
	return &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: b}}
}

// dataType says which of config and state a Get wants.
type dataType struct{ config, state bool }

func dataTypeOf(t gpb.GetRequest_DataType) dataType {
	switch t {
	case gpb.GetRequest_CONFIG:
		return dataType{config: true}
	case gpb.GetRequest_STATE, gpb.GetRequest_OPERATIONAL:
		return dataType{state: true}
	}
	return dataType{true, true}
}

// leaves reads what a full path names: in the native origin or the
// OpenConfig one. A concrete path to nothing is NotFound; a wildcard
// that matches nothing is empty.
func (s *Server) leaves(ctx context.Context, p *gpb.Path, dt dataType, enc gpb.Encoding) ([]leaf, error) {
	native, err := isNative(p)
	if err != nil {
		return nil, err
	}
	if !native {
		return s.oc.read(ctx, s, p, dt, enc, 0)
	}
	sels, err := s.parseNative(p)
	if err != nil {
		return nil, err
	}
	var out []leaf
	wild := len(sels) > 1
	for _, sl := range sels {
		if sl.state && !dt.state || !sl.state && !dt.config {
			continue
		}
		wild = wild || sl.wildcard()
		ls, err := s.nativeLeaves(ctx, sl, 0)
		if err != nil {
			return nil, err
		}
		for i := range ls {
			ls[i].path.Origin = p.GetOrigin()
		}
		out = append(out, ls...)
	}
	if len(out) == 0 && !wild && len(sels) == 1 && (sels[0].state && dt.state || !sels[0].state && dt.config) {
		return nil, status.Errorf(codes.NotFound, "%s: no such object", pathString(p))
	}
	return out, nil
}

// Get reads config, state or both at each path.
func (s *Server) Get(ctx context.Context, req *gpb.GetRequest) (*gpb.GetResponse, error) {
	if err := checkEncoding(req.GetEncoding()); err != nil {
		return nil, err
	}
	if len(req.GetUseModels()) > 0 {
		return nil, status.Error(codes.Unimplemented, "use_models is not supported; every model is served")
	}
	dt := dataTypeOf(req.GetType())
	resp := &gpb.GetResponse{}
	now := time.Now().UnixNano()
	paths := req.GetPath()
	if len(paths) == 0 {
		paths = []*gpb.Path{{}}
	}
	for _, p := range paths {
		full, err := joinPath(req.GetPrefix(), p)
		if err != nil {
			return nil, err
		}
		updates, err := s.getUpdates(ctx, full, dt, req.GetEncoding())
		if err != nil {
			return nil, err
		}
		n := &gpb.Notification{Timestamp: now, Update: updates}
		if t := req.GetPrefix().GetTarget(); t != "" {
			n.Prefix = &gpb.Path{Target: t}
		}
		resp.Notification = append(resp.Notification, n)
	}
	return resp, nil
}

// getUpdates are the updates a Get answers for one full path: from the
// Get cache when it may keep them (read-only: shared by the answers).
func (s *Server) getUpdates(ctx context.Context, full *gpb.Path, dt dataType, enc gpb.Encoding) ([]*gpb.Update, error) {
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	key, kind, cacheable := getCacheKey((*bp)[:0], full, dt, enc)
	*bp = key[:0]
	var rev uint64
	if cacheable {
		rev = s.lastCommitOf(kind) // before the read: see getCache
		if u, ok := s.gets.get(key, rev); ok {
			return u, nil
		}
	}
	ls, err := s.leaves(ctx, full, dt, enc)
	if err != nil {
		return nil, grpcError(err)
	}
	updates := make([]*gpb.Update, 0, len(ls))
	for _, l := range ls {
		updates = append(updates, &gpb.Update{Path: l.path, Val: typedValue(enc, l.json)})
	}
	if cacheable {
		s.gets.put(key, rev, updates)
	}
	return updates, nil
}
