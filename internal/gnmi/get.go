package gnmi

import (
	"context"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
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

// leaves reads what a full path names, in the native origin or the
// OpenConfig one, and hands them to emit in parts (a native path's, one
// kind at a time; an OpenConfig path's at once): emit's error stops the
// read. A part that reads many objects (a kind's, all of an OpenConfig
// path's, which reads whole kinds) is read and emitted while the user u
// holds one of its read tokens (u.reads, shared with its subscriptions'
// initial reads), so that one user's reads at once, and what they hold
// until emitted, are few. A concrete path to nothing is NotFound; a
// wildcard that matches nothing is empty.
func (s *Server) leaves(ctx context.Context, u *usage, p *gpb.Path, dt dataType, enc gpb.Encoding, emit func([]leaf) error) error {
	native, err := isNative(p)
	if err != nil {
		return err
	}
	if !native {
		return u.whileReading(ctx, true, func() error {
			ls, err := s.oc.read(ctx, s, p, dt, enc, 0)
			if err != nil {
				return err
			}
			return emit(ls)
		})
	}
	sels, err := s.parseNative(p)
	if err != nil {
		return err
	}
	found := false
	wild := len(sels) > 1
	for _, sl := range sels {
		if sl.state && !dt.state || !sl.state && !dt.config {
			continue
		}
		wild = wild || sl.wildcard()
		err := u.whileReading(ctx, sl.readsMany(), func() error {
			ls, err := s.nativeLeaves(ctx, sl, 0)
			if err != nil {
				return err
			}
			for i := range ls {
				ls[i].path.Origin = p.GetOrigin()
			}
			found = found || len(ls) > 0
			return emit(ls)
		})
		if err != nil {
			return err
		}
	}
	if !found && !wild && len(sels) == 1 && (sels[0].state && dt.state || !sels[0].state && dt.config) {
		return status.Errorf(codes.NotFound, "%s: no such object", pathString(p))
	}
	return nil
}

// Get reads config, state or both at each path. Its answer is encoded as
// it is read and bounded (Options.MaxGetPaths, MaxGetAnswer,
// UserGetBytes): the reads stop as soon as it would pass a bound, and the
// Get fails with ResourceExhausted.
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
	head := &gpb.Notification{Timestamp: time.Now().UnixNano()}
	if t := req.GetPrefix().GetTarget(); t != "" {
		head.Prefix = &gpb.Path{Target: t}
	}
	user := identityOf(ctx).Name
	u := s.users.acquire(user)
	defer s.users.release(user, u)
	a := &answer{u: u, user: user, max: s.o.MaxGetAnswer, userMax: s.o.UserGetBytes, paths: len(paths)}
	defer a.release()
	for i, p := range paths {
		full, err := joinPath(req.GetPrefix(), p)
		if err != nil {
			return nil, err
		}
		a.path, a.full = i, full
		if err := a.begin(head); err != nil {
			return nil, err
		}
		if err := s.appendUpdates(ctx, a, full, dt, req.GetEncoding()); err != nil {
			return nil, err
		}
		a.end()
	}
	// The notifications are the response's field 1, encoded: gRPC sends
	// a message's unknown fields as they are, and the client decodes them
	// as its notifications.
	resp := &gpb.GetResponse{}
	resp.ProtoReflect().SetUnknown(a.raw)
	return resp, nil
}

// appendUpdates appends to a's notification the updates a Get answers for
// one full path: from the Get cache when it may keep them.
func (s *Server) appendUpdates(ctx context.Context, a *answer, full *gpb.Path, dt dataType, enc gpb.Encoding) error {
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	key, kind, cacheable := getCacheKey((*bp)[:0], full, dt, enc)
	*bp = key[:0]
	var rev uint64
	if cacheable {
		rev = s.lastCommitOf(kind) // before the read: see getCache
		if b, ok := s.gets.get(key, rev); ok {
			return a.appendEncoded(b)
		}
	}
	start := len(a.raw)
	upd := &gpb.Update{}
	err := s.leaves(ctx, a.u, full, dt, enc, func(ls []leaf) error {
		for _, l := range ls {
			upd.Path, upd.Val = l.path, typedValue(enc, l.json)
			if err := a.appendUpdate(upd); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return grpcError(err)
	}
	if cacheable {
		s.gets.put(key, rev, a.raw[start:])
	}
	return nil
}

// answer is a Get's response being built: its notifications, encoded.
// What it holds (its buffer's capacity) is counted in its user's usage
// before it is allocated.
type answer struct {
	u       *usage
	user    string
	max     int64 // bound of the encoded answer (Options.MaxGetAnswer)
	userMax int64 // of the user's answers at once (Options.UserGetBytes)
	raw     []byte
	counted int64 // of raw's capacity, in u
	// The notification being built starts at mark: its header room
	// (notificationHead), then head's encoding, then the updates.
	mark        int
	path, paths int
	full        *gpb.Path
}

// notificationHead is the room left for a notification's field tag and
// length (at most 4 bytes of length: an answer is below 256 MiB).
const notificationHead = 5

// begin starts the notification of the next path with head's fields.
func (a *answer) begin(head *gpb.Notification) error {
	n := proto.Size(head)
	if err := a.reserve(notificationHead + n); err != nil {
		return err
	}
	a.mark = len(a.raw)
	a.raw = a.raw[:a.mark+notificationHead]
	var err error
	a.raw, err = proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(a.raw, head)
	return err
}

// end writes the notification's tag and length before it, in the room
// begin left.
func (a *answer) end() {
	body := len(a.raw) - a.mark - notificationHead
	var h [notificationHead]byte
	tag := protowire.AppendVarint(protowire.AppendTag(h[:0], 1, protowire.BytesType), uint64(body))
	copy(a.raw[a.mark:], tag)
	copy(a.raw[a.mark+len(tag):], a.raw[a.mark+notificationHead:])
	a.raw = a.raw[:len(a.raw)-(notificationHead-len(tag))]
}

// appendUpdate appends u as an update of the notification.
func (a *answer) appendUpdate(u *gpb.Update) error {
	n := proto.Size(u)
	if err := a.reserve(1 + protowire.SizeVarint(uint64(n)) + n); err != nil {
		return err
	}
	a.raw = protowire.AppendVarint(protowire.AppendTag(a.raw, 4, protowire.BytesType), uint64(n))
	var err error
	a.raw, err = proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(a.raw, u)
	return err
}

// appendEncoded appends updates encoded by appendUpdate.
func (a *answer) appendEncoded(b []byte) error {
	if err := a.reserve(len(b)); err != nil {
		return err
	}
	a.raw = append(a.raw, b...)
	return nil
}

// reserve makes room for n more bytes: ResourceExhausted when the answer
// would pass its bound or the user's answers theirs.
func (a *answer) reserve(n int) error {
	need := int64(len(a.raw) + n)
	if need > a.max {
		return status.Errorf(codes.ResourceExhausted, "the answer passed %d bytes at path %d of %d (%s): Get narrower paths or fewer at once, or Subscribe (ONCE) to it, which sends the values in parts", a.max, a.path+1, a.paths, pathString(a.full))
	}
	if need <= int64(cap(a.raw)) {
		return nil
	}
	c := min(max(need, 2*int64(cap(a.raw)), minAnswerBuf), a.max)
	if !a.u.addGet(c-a.counted, a.userMax) {
		return status.Errorf(codes.ResourceExhausted, "the answers of %s's Gets under way would pass %d bytes: wait for them, Get narrower paths, or Subscribe (ONCE)", a.user, a.userMax)
	}
	a.counted = c
	raw := make([]byte, len(a.raw), c)
	copy(raw, a.raw)
	a.raw = raw
	return nil
}

// minAnswerBuf is an answer's first buffer.
const minAnswerBuf = 512

// release gives back what the answer counted in its user's usage.
func (a *answer) release() { a.u.doneGet(a.counted) }
