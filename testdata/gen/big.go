package main

import (
	"context"
	"errors"
)

func runBig(ctx context.Context, out string, size int64, version string) error {
	return errors.New("big: not implemented yet")
}

func runRecover(ctx context.Context, dir, version string) error {
	return errors.New("recover: not implemented yet")
}
