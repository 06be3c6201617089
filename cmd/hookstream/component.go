package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hookstream/hookstream/admin"
	"github.com/hookstream/hookstream/internal/metrics"
)

// serveComponent runs one component's loop and, unless addr is empty, its probe and metrics
// routes. It returns when ctx ends or the component fails.
func serveComponent(ctx context.Context, log *slog.Logger, addr string, run func(ctx context.Context, reg *prometheus.Registry) error, checks ...admin.Check) error {
	reg := metrics.NewRegistry()
	g, gctx := errgroup.WithContext(ctx)
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("metrics listen %s: %w", addr, err)
		}
		srv := &http.Server{Handler: admin.Probes(reg, checks...), ReadHeaderTimeout: 10 * time.Second}
		log.Info("probes and metrics listening", "addr", "http://"+ln.Addr().String())
		g.Go(func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
		g.Go(func() error {
			<-gctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		})
	}
	g.Go(func() error {
		err := run(gctx, reg)
		if err == nil && ctx.Err() == nil {
			return errors.New("component stopped")
		}
		return err
	})
	err := g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}
