// Package redisstore keeps aguistate thread logs in Redis.
package redisstore

import _ "github.com/redis/go-redis/v9"
