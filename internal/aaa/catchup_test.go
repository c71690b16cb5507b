package aaa_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/aaa/aaatest"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
)

// heldFeed is the engine as central AAA's source, with a change feed the
// test publishes to itself: the service learns of a commit only when the
// test says so, however late.
type heldFeed struct {
	*engine.Engine
	b *feed.Broker
}

func (h heldFeed) Feed() *feed.Broker { return h.b }

// TestLoginWaitsForTheCommitsAnswered: a login made right after the commit
// that turned TACACS+ on is checked by the server, even when the service
// has not yet read that commit from the change feed (it waits for it),
// instead of finding no server and falling back to the local accounts.
func TestLoginWaitsForTheCommitsAnswered(t *testing.T) {
	tac := aaatest.StartTacacs(t, tacSecret, users)
	f := enginetest.New(t, t.TempDir())
	b := feed.New(func([]byte, uint64) ([]byte, error) { return nil, errors.New("no large events here") })
	svc := aaa.New(aaa.Options{Source: heldFeed{f.E, b}})
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	f.MustApply(f.Edit(backend.Create, "Tacacs", tacacs(tac)))
	out := f.MustApply(f.Edit(backend.Update, "TacacsGlobal", model.Object{"Enable": "true", "Timeout": int64(2)}))
	go func() {
		time.Sleep(300 * time.Millisecond)
		b.Publish(out.Revision, []byte(`{"Revision":1,"Changes":[{"Kind":"TacacsGlobal"}]}`))
	}()
	r, err := svc.Login(context.Background(), "toper", "oper-pass-1", "")
	if err != nil || !r.Answered || !r.OK || r.Group != "operator" {
		t.Fatalf("a login right after the commit: %+v %v, want the server's yes", r, err)
	}
}
