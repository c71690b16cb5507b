package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"
	"time"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/testserver"
)

// server is the in-process swmgr the examples talk to; serverURL and
// adminPassword stand for a real switch's address and password.
var (
	server        *testserver.Server
	serverURL     string
	adminPassword string
)

func TestMain(m *testing.M) {
	s, err := testserver.Start("", testserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server, serverURL, adminPassword = s, s.TLSURL, testserver.AdminPassword
	code := m.Run()
	s.Close()
	os.Exit(code)
}

// Connect over HTTPS with a user's credentials, pinning the certificate
// swmgr logged at start (cert_sha256), and read an object by its key.
func Example() {
	ctx := context.Background()
	c, err := client.New(serverURL,
		client.WithBasicAuth("admin", adminPassword),
		client.WithFingerprint(server.Fingerprint))
	if err != nil {
		log.Fatal(err)
	}
	port, err := c.Get(ctx, "Port", client.Object{"IntfRef": "fpPort1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(port.Object["IntfRef"], port.Object["Mtu"])
	// Output: fpPort1 1500
}

// Create, read, update and delete an object; errors carry the API's code.
func ExampleObjects_Create() {
	ctx := context.Background()
	c, _ := client.New(serverURL, client.WithBasicAuth("admin", adminPassword), client.WithCAFile(server.CertFile))

	created, err := c.Create(ctx, "Vrf", client.Object{"Vrf": "blue"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Create(ctx, "Vrf", client.Object{"Vrf": "blue"})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code, apiErr.ObjectId == created.ObjectId)
	}
	got, _ := c.GetByID(ctx, "Vrf", created.ObjectId)
	fmt.Println(got.Object["Vrf"], got.ETag == created.ETag)

	// If-Match makes the delete fail if someone changed the object since.
	if _, err := c.Delete(ctx, "Vrf", created.ObjectId, client.IfMatch(got.ETag)); err != nil {
		log.Fatal(err)
	}
	_, err = c.GetByID(ctx, "Vrf", created.ObjectId)
	fmt.Println(client.IsNotFound(err))
	// Output:
	// 409 duplicate true
	// blue true
	// true
}

// Iterate over every object of a kind; pages are read as the loop goes.
func ExampleObjects_List() {
	ctx := context.Background()
	c, _ := client.New(serverURL, client.WithBasicAuth("admin", adminPassword), client.WithCAFile(server.CertFile))
	n := 0
	for port, err := range c.List(ctx, "Port", client.PageSize(3)) {
		if err != nil {
			log.Fatal(err)
		}
		if port.Object["AdminState"] == "DOWN" {
			n++
		}
	}
	fmt.Println(n, "ports are down")
	// Output: 8 ports are down
}

// A dry run reports what a write would change, and changes nothing.
func ExampleDryRun() {
	ctx := context.Background()
	c, _ := client.New(serverURL, client.WithBasicAuth("admin", adminPassword), client.WithCAFile(server.CertFile))
	res, err := c.UpdateByKey(ctx, "Port", client.Object{"IntfRef": "fpPort2", "Mtu": 9000}, client.DryRun())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.DryRun, res.Changes[0].Op, res.Changes[0].After["Mtu"])
	port, _ := c.Get(ctx, "Port", client.Object{"IntfRef": "fpPort2"})
	fmt.Println(port.Object["Mtu"])
	// Output:
	// true update 9000
	// 1500
}

// Read a state form: the config kind's name, with operational fields.
func ExampleClient_State() {
	ctx := context.Background()
	c, _ := client.New(serverURL, client.WithBasicAuth("admin", adminPassword), client.WithCAFile(server.CertFile))
	st, err := c.State(ctx, "Port", client.Object{"IntfRef": "fpPort1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Object["OperState"])
	// Output: DOWN
}

// Stage several changes in a candidate, look at the diff, and commit them
// as one revision that is rolled back unless confirmed.
func ExampleCandidate_Commit() {
	ctx := context.Background()
	c, _ := client.New(serverURL, client.WithBasicAuth("admin", adminPassword), client.WithCAFile(server.CertFile))
	cand, err := c.NewCandidate(ctx, "two VRFs")
	if err != nil {
		log.Fatal(err)
	}
	cand.Create(ctx, "Vrf", client.Object{"Vrf": "red"})
	cand.Create(ctx, "Vrf", client.Object{"Vrf": "green"})
	diff, _ := cand.Diff(ctx)
	fmt.Println(len(diff), "changes staged")

	res, err := cand.Commit(ctx, client.CommitOptions{Comment: "two VRFs", Confirm: 2 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(res.Changes), "changes committed, confirm by", !res.ConfirmBy.IsZero())
	if err := c.Confirm(ctx, res.Revision); err != nil {
		log.Fatal(err)
	}
	rev, _ := c.Revision(ctx, res.Revision)
	fmt.Println(rev.Comment, rev.User)

	// Roll back to the revision before: both VRFs go.
	back, err := c.Rollback(ctx, res.Revision-1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(back.Changes), "changes rolled back")
	// Output:
	// 2 changes staged
	// 2 changes committed, confirm by true
	// two VRFs admin
	// 2 changes rolled back
}

// Follow the change feed; after a disconnect it resumes where it was.
func ExampleClient_Events() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := client.New(serverURL, client.WithBasicAuth("admin", adminPassword), client.WithCAFile(server.CertFile))
	// Start after the running revision: the next commit is the first event.
	var since uint64
	for r, err := range c.Revisions(ctx, client.PageSize(1)) {
		if err != nil {
			log.Fatal(err)
		}
		since = r.Revision
		break
	}
	go c.UpdateByKey(ctx, "SystemParam", client.Object{"Description": "core switch"})
	for ev, err := range c.Events(ctx, client.FeedOptions{Since: &since}) {
		if err != nil {
			log.Fatal(err)
		}
		ch := ev.Revision.Changes[0]
		fmt.Println(ev.Revision.Revision == since+1, ch.Kind, ch.After["Description"])
		break
	}
	// Output: true SystemParam core switch
}
