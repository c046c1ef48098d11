import { defineConfig } from "drizzle-kit";

// Migrations are generated from src/store/schema.ts and committed; CI fails if they drift.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/store/schema.ts",
  out: "./drizzle",
});
