package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
)

// countCall counts one call that reached a known kind.
func countCall(c *obs.Calls, method string, class model.Class) {
	switch {
	case method == http.MethodGet || method == http.MethodHead:
		c.Get.Add(1)
	case class == model.Action:
		c.Action.Add(1)
	case method == http.MethodPost:
		c.Create.Add(1)
	case method == http.MethodPatch:
		c.Update.Add(1)
	case method == http.MethodDelete:
		c.Delete.Add(1)
	}
}

// stateOnly answers a read of a state-only kind from the provider the
// table binds to it (bind.Table.StateObjects). The config log is read by
// get and list.
func (q *request) stateOnly() error {
	k := q.kind
	if q.s.table == nil {
		return apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, k.Name, "", "this swmgr does not provide %s", k.Name)
	}
	return q.serviceState(func(ctx context.Context) ([]model.Object, error) { return q.s.table.StateObjects(ctx, k) })
}

// serviceState answers a read of a kind a source lists (src, a
// bind.Source): the one
// object of a singleton by its path (FlexSwitch's ObjectId is "" for these),
// or a page of all.
func (q *request) serviceState(src bind.Source) error {
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
