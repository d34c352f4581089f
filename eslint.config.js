import js from "@eslint/js"
import prettier from "eslint-config-prettier"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/dist/**", "**/build/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off"
    }
  },
  {
    files: ["packages/*/src/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: "Use Clock/DateTime in library code."
        },
        {
          selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
          message: "Use Random in library code."
        }
      ],
      // Issue 23: the index of `@effect/platform` loads every module of it, the bundles of Swagger UI
      // and Scalar among them (34 MB of an idle server, bench/results.md).
      "no-restricted-imports": [
        "error",
        {
          name: "@effect/platform",
          message: "Import the module by path (`@effect/platform/HttpClient`): the index loads all of them."
        }
      ]
    }
  },
  {
    // The Promise client has no Effect: its clock and randomness are options (`now`, `random`)
    // whose defaults are the platform's.
    files: ["packages/client/src/**/*.ts"],
    rules: { "no-restricted-syntax": "off" }
  },
  {
    files: ["packages/core/src/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "NewExpression[callee.name='Date']", message: "Use Clock/DateTime in core." },
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: "Use Clock/DateTime in core."
        },
        {
          selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
          message: "Use Random in core."
        },
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: "Config only at the edges."
        }
      ]
    }
  },
  prettier
)
