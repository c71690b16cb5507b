package gnmi

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// usecToMillis converts one of NtpServer's microsecond fields to the
// unsigned milliseconds OpenConfig's NTP leaves are (rounded to the
// nearest): the magnitude when abs (a clock's offset is either side;
// OpenConfig's offset is unsigned), else no leaf for a negative value.
// wide is a uint64 leaf, a string in JSON_IETF (RFC 7951); else a
// uint32.
func usecToMillis(abs, wide bool) ocConv {
	return ocConv{to: func(raw json.RawMessage, ietf bool) (json.RawMessage, bool) {
		us, err := strconv.ParseInt(rawText(raw), 10, 64)
		if err != nil {
			return nil, false
		}
		if us < 0 && abs {
			us = -us
		}
		if us < 0 {
			return nil, false
		}
		ms := (us + 500) / 1000
		if !wide && ms > 1<<32-1 {
			return nil, false
		}
		v := strconv.FormatInt(ms, 10)
		if wide && ietf {
			return jstr(v), true
		}
		return json.RawMessage(v), true
	}}
}

// ntpState is HostNtpState: NTP is on while an NtpServer is configured
// (model.NtpEnabledBy: swmgr runs chronyd with them; with none the clock
// is left alone).
func (s *Server) ntpState(ctx context.Context) ([]model.Object, error) {
	k := model.NtpEnabledBy(s.reg)
	enabled := false
	if k != nil {
		err := s.o.Engine.Store().View(func(tx store.Txn) error {
			return s.o.Engine.NewView(tx).Each(k.Name, func(string, model.Object) bool {
				enabled = true
				return false
			})
		})
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return []model.Object{{"Enabled": enabled}}, nil
}
