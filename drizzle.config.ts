import { defineConfig } from "drizzle-kit";

// Migrations are generated from the schemas and committed; CI fails if they drift. One file serves
// both backends because drizzle-kit takes one dialect per config: SQLite's by default,
// PostgreSQL's with DRIZZLE_DIALECT=postgresql (`npm run db:generate` runs both).
const dialect = process.env.DRIZZLE_DIALECT ?? "sqlite";
if (dialect !== "sqlite" && dialect !== "postgresql") {
  throw new Error(`DRIZZLE_DIALECT must be sqlite or postgresql, not ${JSON.stringify(dialect)}`);
}

export default dialect === "postgresql"
  ? defineConfig({
      dialect: "postgresql",
      schema: "./src/store/postgres/schema.ts",
      out: "./drizzle/postgres",
    })
  : defineConfig({
      dialect: "sqlite",
      schema: "./src/store/schema.ts",
      out: "./drizzle",
    });
