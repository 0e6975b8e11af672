"""The publish/subscribe commands, Redis's pubsub.c."""
