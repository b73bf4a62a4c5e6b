// The reference Mercure 0.x hub for the test suite: the published github.com/dunglas/mercure module at
// v0.24.2 (the 0.x line), configured the way a Laravel deployment configures it (see test/reference-hub/README.md).
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
	// A 0.x hub has no issuer or audience: -issuer and -resource are accepted and ignored.
	options := []mercure.Option{
		mercure.WithLogger(c.Logger),
		mercure.WithPublisherJWT([]byte(c.Key), "HS256"),
		mercure.WithSubscriberJWT([]byte(c.Key), "HS256"),
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
