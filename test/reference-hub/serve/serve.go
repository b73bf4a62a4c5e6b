// Package serve holds what both reference hub programs share: their flags, the loopback listener and the
// shutdown on SIGTERM. Each program only turns the flags into the options of its own hub version.
package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Config is what a test asks of a hub; the names follow the Caddyfile directives of the same meaning.
type Config struct {
	Addr            string
	Key             string
	Issuer          string
	Resource        string
	CookieName      string
	CORSOrigins     []string
	PublishOrigins  []string
	HistoryFile     string
	Anonymous       bool
	Subscriptions   bool
	WriteTimeout    time.Duration
	DispatchTimeout time.Duration
	Heartbeat       time.Duration
	Logger          *slog.Logger
}

// ParseFlags reads the command line into a Config.
func ParseFlags() Config {
	var c Config
	var cors, publish string
	flag.StringVar(&c.Addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free one)")
	flag.StringVar(&c.Key, "key", "", "HS256 key shared by publishers and subscribers (required)")
	flag.StringVar(&c.Issuer, "issuer", "", "the trusted token issuer (iss)")
	flag.StringVar(&c.Resource, "resource", "", "the resource identifier tokens must name in aud")
	flag.StringVar(&c.CookieName, "cookie", "mercure_access_token", "the authorization cookie's name")
	flag.StringVar(&cors, "cors", "", "comma-separated CORS origins")
	flag.StringVar(&publish, "publish-origins", "", "comma-separated origins allowed to publish with the cookie")
	flag.StringVar(&c.HistoryFile, "history", "", "bolt database file for history (empty: no history)")
	flag.BoolVar(&c.Anonymous, "anonymous", true, "allow subscribers without a token")
	flag.BoolVar(&c.Subscriptions, "subscriptions", true, "the subscriptions API and subscription events")
	flag.DurationVar(&c.WriteTimeout, "write-timeout", 600*time.Second, "longest life of a stream")
	flag.DurationVar(&c.DispatchTimeout, "dispatch-timeout", 5*time.Second, "longest single write")
	flag.DurationVar(&c.Heartbeat, "heartbeat", 40*time.Second, "interval of keep-alive comments")
	flag.Parse()
	if c.Key == "" {
		fmt.Fprintln(os.Stderr, "-key is required")
		os.Exit(2)
	}
	c.CORSOrigins = list(cors)
	c.PublishOrigins = list(publish)
	c.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))

	return c
}

func list(value string) []string {
	if value == "" {
		return nil
	}

	return strings.Split(value, ",")
}

// Run listens on c.Addr, prints "listening on http://host:port" on stdout once requests are accepted, serves
// handler until SIGTERM or SIGINT, then calls stop (which ends the hub's streams) and exits.
func Run(c Config, handler http.Handler, stop func(context.Context) error) {
	listener, err := net.Listen("tcp", c.Addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// No server-wide write timeout: the hub sets each stream's deadline itself.
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s\n", listener.Addr())

	done := make(chan struct{})
	go func() {
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
		<-signals
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = stop(ctx)
		_ = server.Shutdown(ctx)
		close(done)
	}()

	if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	<-done
}
