// Package pgstore keeps aguistate thread logs in PostgreSQL.
package pgstore

import _ "github.com/jackc/pgx/v5/pgxpool"
