package retrytopics

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaLogger passes franz-go's warnings and errors to the component's logger.
type kafkaLogger struct{ log *slog.Logger }

func (l kafkaLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (l kafkaLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelWarn
	if level == kgo.LogLevelError {
		lv = slog.LevelError
	}
	l.log.Log(context.Background(), lv, "kafka: "+msg, keyvals...)
}
