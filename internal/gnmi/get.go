package gnmi

import (
	"context"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
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

// Get reads config, state or both at each path. Its answer is bounded
// (Options.MaxGetPaths, MaxGetAnswer, UserGetBytes): the reads stop as
// soon as it passes a bound, and the Get fails with ResourceExhausted.
func (s *Server) Get(ctx context.Context, req *gpb.GetRequest) (*gpb.GetResponse, error) {
	if err := checkEncoding(req.GetEncoding()); err != nil {
		return nil, err
	}
	if len(req.GetUseModels()) > 0 {
		return nil, status.Error(codes.Unimplemented, "use_models is not supported; every model is served")
	}
	paths := req.GetPath()
	if len(paths) > s.o.MaxGetPaths {
		return nil, status.Errorf(codes.ResourceExhausted, "a Get reads at most %d paths and this one names %d: send fewer paths in each Get, or a path with a wildcard, or Subscribe (ONCE) to them", s.o.MaxGetPaths, len(paths))
	}
	if len(paths) == 0 {
		paths = []*gpb.Path{{}}
	}
	dt := dataTypeOf(req.GetType())
	resp := &gpb.GetResponse{}
	now := time.Now().UnixNano()
	user := identityOf(ctx).Name
	u := s.users.acquire(user)
	defer s.users.release(user, u)
	var size int64 // of the answer so far, counted in u
	defer func() { u.doneGet(size) }()
	for i, p := range paths {
		full, err := joinPath(req.GetPrefix(), p)
		if err != nil {
			return nil, err
		}
		updates, n, err := s.getUpdates(ctx, full, dt, req.GetEncoding())
		if err != nil {
			return nil, err
		}
		if size+n > s.o.MaxGetAnswer {
			return nil, status.Errorf(codes.ResourceExhausted, "the answer passed %d bytes at path %d of %d (%s): Get narrower paths or fewer at once, or Subscribe (ONCE) to it, which sends the values in parts", s.o.MaxGetAnswer, i+1, len(paths), pathString(full))
		}
		if !u.addGet(n, s.o.UserGetBytes) {
			return nil, status.Errorf(codes.ResourceExhausted, "the answers of %s's Gets under way would pass %d bytes: wait for them, Get narrower paths, or Subscribe (ONCE)", user, s.o.UserGetBytes)
		}
		size += n
		note := &gpb.Notification{Timestamp: now, Update: updates}
		if t := req.GetPrefix().GetTarget(); t != "" {
			note.Prefix = &gpb.Path{Target: t}
		}
		resp.Notification = append(resp.Notification, note)
	}
	return resp, nil
}

// getUpdates are the updates a Get answers for one full path, and their
// encoded size: from the Get cache when it may keep them (read-only:
// shared by the answers).
func (s *Server) getUpdates(ctx context.Context, full *gpb.Path, dt dataType, enc gpb.Encoding) ([]*gpb.Update, int64, error) {
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	key, kind, cacheable := getCacheKey((*bp)[:0], full, dt, enc)
	*bp = key[:0]
	var rev uint64
	if cacheable {
		rev = s.lastCommitOf(kind) // before the read: see getCache
		if u, n, ok := s.gets.get(key, rev); ok {
			return u, n, nil
		}
	}
	ls, err := s.leaves(ctx, full, dt, enc)
	if err != nil {
		return nil, 0, grpcError(err)
	}
	updates := make([]*gpb.Update, 0, len(ls))
	var n int64
	for _, l := range ls {
		u := &gpb.Update{Path: l.path, Val: typedValue(enc, l.json)}
		n += int64(proto.Size(u)) + notificationFieldSize
		updates = append(updates, u)
	}
	if cacheable {
		s.gets.put(key, rev, updates, n)
	}
	return updates, n, nil
}

// notificationFieldSize is what an update adds to a notification beyond
// its own encoding (the field's tag and length), at most.
const notificationFieldSize = 6
