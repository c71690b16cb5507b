package api

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
)

// StateSource returns the objects of a state-only kind that the service
// itself knows (SystemStatus, SystemSwVersion), in a stable order.
type StateSource = func(ctx context.Context) ([]model.Object, error)

// HandleState serves the state-only kind name (as declared, e.g.
// "SystemStatusState") from src. Call it before serving.
func (s *Server) HandleState(name string, src StateSource) {
	if s.states == nil {
		s.states = map[string]StateSource{}
	}
	s.states[name] = src
}

// CallCounts are the REST calls served since start, by operation, as
// SystemStatus reports them.
type CallCounts struct {
	Create, Delete, Update, Get, Action uint64
}

type callCounters struct {
	create, delete, update, get, action atomic.Uint64
}

// count records one call that reached a known kind.
func (c *callCounters) count(method string, class model.Class) {
	switch {
	case method == http.MethodGet || method == http.MethodHead:
		c.get.Add(1)
	case class == model.Action:
		c.action.Add(1)
	case method == http.MethodPost:
		c.create.Add(1)
	case method == http.MethodPatch:
		c.update.Add(1)
	case method == http.MethodDelete:
		c.delete.Add(1)
	}
}

// Calls returns the calls counted so far.
func (s *Server) Calls() CallCounts {
	c := &s.calls
	return CallCounts{Create: c.create.Load(), Delete: c.delete.Load(), Update: c.update.Load(), Get: c.get.Load(), Action: c.action.Load()}
}

// stateOnly answers a read of a state-only kind from the source it
// declares (model.Kind.Source): the service's own (HandleState) or its
// backend driver's. The config log is read by get and list.
func (q *request) stateOnly() error {
	switch q.kind.Source {
	case model.SourceService:
		src := q.s.states[q.kind.Name]
		if src == nil {
			return apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, q.kind.Name, "", "this swmgr does not provide %s", q.kind.Name)
		}
		return q.serviceState(src)
	case model.SourceBackend:
		k := q.kind
		return q.serviceState(func(ctx context.Context) ([]model.Object, error) { return q.s.eng.StateObjects(ctx, k) })
	}
	return apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, q.kind.Name, "", "%s comes from source %q, which this swmgr does not know", q.kind.Name, q.kind.Source)
}

// serviceState answers a read of a kind served by a StateSource: the one
// object of a singleton by its path (FlexSwitch's ObjectId is "" for these),
// or a page of all.
func (q *request) serviceState(src StateSource) error {
	objs, err := src(q.r.Context())
	if err != nil {
		return err
	}
	if q.route.ID != "" {
		return apierr.NotFound(apierr.CodeNotFound, q.kind.Name, "%s has no ObjectId; read it at %sstate/%s", q.kind.Name, Prefix, q.route.Name)
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	dst := (*bp)[:0]
	if !q.route.Plural {
		o, err := q.pickOne(objs)
		if err != nil {
			return err
		}
		dst = append(dst, `{"Object":`...)
		dst = q.kind.AppendJSON(dst, o, false)
		dst = append(dst, `,"ObjectId":""}`...)
	} else {
		marker, count, err := pageParams(q.kind.Name, q.r)
		if err != nil {
			return err
		}
		start := min(marker, uint64(len(objs)))
		end := min(start+uint64(count), uint64(len(objs)))
		dst = append(dst, `{"CurrentMarker":`...)
		dst = strconv.AppendUint(dst, marker, 10)
		dst = append(dst, `,"MoreExist":`...)
		dst = strconv.AppendBool(dst, end < uint64(len(objs)))
		dst = append(dst, `,"NextMarker":`...)
		dst = strconv.AppendUint(dst, end, 10)
		dst = append(dst, `,"ObjCount":`...)
		dst = strconv.AppendUint(dst, end-start, 10)
		dst = append(dst, `,"Objects":[`...)
		for i := start; i < end; i++ {
			if i > start {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"Object":`...)
			dst = q.kind.AppendJSON(dst, objs[i], false)
			dst = append(dst, `,"ObjectId":""}`...)
		}
		dst = append(dst, "]}"...)
	}
	*bp = dst[:0]
	q.send(http.StatusOK, dst)
	return nil
}

// pickOne selects the object a read names by the fields given in the query
// string and the body (DestinationNw=10.1.1.0/30, IntfRef=fpPort1); with no
// field given the kind must have a single object. A singleton kind's one
// object is picked whatever fields are given (SystemStatus).
func (q *request) pickOne(objs []model.Object) (model.Object, error) {
	want, err := q.kind.ParseQuery(q.r.URL.Query())
	if err != nil {
		return nil, err
	}
	body, err := q.kind.Parse(q.body)
	if err != nil {
		return nil, err
	}
	for n, v := range body {
		want[n] = v
	}
	if q.kind.Singleton {
		// Its one object, whatever the fields given say (FlexSwitch's CLI
		// polls SystemStatus with {"Name": ""}).
		clear(want)
	}
	if len(want) == 0 {
		switch len(objs) {
		case 0:
			return nil, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, q.kind.Name, "", "%s is not available yet", q.kind.Name)
		case 1:
			return objs[0], nil
		}
		return nil, apierr.BadRequest(apierr.CodeMissingField, q.kind.Name, "", "there are %d %s objects: name one by a field (%s=...), or list them at %sstate/%ss", len(objs), q.kind.Name, q.kind.Fields[0].Name, Prefix, q.route.Name)
	}
	for _, o := range objs {
		match := true
		for n, v := range want {
			if !model.EqualValue(o[n], v) {
				match = false
				break
			}
		}
		if match {
			return o, nil
		}
	}
	return nil, apierr.NotFound(apierr.CodeNotFound, q.kind.Name, "no %s has the fields given", q.kind.Name)
}

// StateObjects lists the objects of a state-only kind from the source it
// declares: the service's own (HandleState) or its backend driver's. Other
// front ends (gNMI) read state through it.
func (s *Server) StateObjects(ctx context.Context, k *model.Kind) ([]model.Object, error) {
	switch k.Source {
	case model.SourceService:
		if src := s.states[k.Name]; src != nil {
			return src(ctx)
		}
		return nil, apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, k.Name, "", "this swmgr does not provide %s", k.Name)
	case model.SourceBackend:
		return s.eng.StateObjects(ctx, k)
	}
	return nil, apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, k.Name, "", "%s comes from source %q, which is read otherwise", k.Name, k.Source)
}
