// The reference Mercure 1.0 hub for the test suite: the published github.com/dunglas/mercure module at
// v1.0.0-alpha.3, configured the way a Laravel deployment configures it (see test/reference-hub/README.md).
package main

import (
	"context"
	"fmt"
	"os"

	"example.invalid/refhub/serve"
	"github.com/dunglas/mercure"
)

func main() {
	c := serve.ParseFlags()
	if c.Issuer == "" || c.Resource == "" {
		fmt.Fprintln(os.Stderr, "-issuer and -resource are required for a 1.0 hub")
		os.Exit(2)
	}
	key := mercure.Static{Key: []byte(c.Key), Algorithm: "HS256"}
	options := []mercure.Option{
		mercure.WithLogger(c.Logger),
		mercure.WithIssuers([]mercure.Issuer{{Identifier: c.Issuer, Publisher: key, Subscriber: key}}),
		mercure.WithResourceIdentifier(c.Resource),
		mercure.WithCookieName(c.CookieName),
		mercure.WithWriteTimeout(c.WriteTimeout),
		mercure.WithDispatchTimeout(c.DispatchTimeout),
		mercure.WithHeartbeat(c.Heartbeat),
	}
	if len(c.CORSOrigins) > 0 {
		options = append(options, mercure.WithCORSOrigins(c.CORSOrigins))
	}
	if len(c.PublishOrigins) > 0 {
		options = append(options, mercure.WithPublishOrigins(c.PublishOrigins))
	}
	if c.Anonymous {
		options = append(options, mercure.WithAnonymous())
	}
	if c.Subscriptions {
		options = append(options, mercure.WithSubscriptions())
	}

	list := mercure.NewSubscriberList(mercure.DefaultSubscriberListCacheSize)
	var transport mercure.Transport = mercure.NewLocalTransport(list)
	if c.HistoryFile != "" {
		bolt, err := mercure.NewBoltTransport(list, c.Logger, c.HistoryFile, "", 0, mercure.BoltDefaultCleanupFrequency)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		transport = bolt
	}
	options = append(options, mercure.WithTransport(transport))

	hub, err := mercure.NewHub(context.Background(), options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serve.Run(c, hub, hub.Stop)
}
