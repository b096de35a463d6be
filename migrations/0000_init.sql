CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`prefix` text NOT NULL,
	`hash` text NOT NULL,
	`scopes` text NOT NULL,
	`expires_at` text,
	`revoked_at` text,
	`last_used_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_workspace` ON `api_keys` (`workspace_id`);--> statement-breakpoint
CREATE TABLE `credit_accounts` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`credit_limit` integer NOT NULL,
	`held` integer DEFAULT 0 NOT NULL,
	`used` integer DEFAULT 0 NOT NULL,
	`period_ends_at` text NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `credit_holds` (
	`job_id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`settled_at` text
);
--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`workspace_id` text NOT NULL,
	`key` text NOT NULL,
	`scope` text NOT NULL,
	`request_hash` text NOT NULL,
	`state` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`response_location` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `scope`, `key`)
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`stage` text NOT NULL,
	`format` text DEFAULT 'png' NOT NULL,
	`options` text NOT NULL,
	`source_key` text NOT NULL,
	`result_key` text,
	`result_content_type` text,
	`model_version` text,
	`error_code` text,
	`error_message` text,
	`warnings` text,
	`batch_id` text,
	`project_id` text,
	`created_at` text NOT NULL,
	`started_at` text,
	`completed_at` text,
	`expires_at` text,
	`result_deleted_at` text
);
--> statement-breakpoint
CREATE INDEX `jobs_workspace_created` ON `jobs` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_expiry` ON `jobs` (`expires_at`);--> statement-breakpoint
CREATE TABLE `uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`status` text NOT NULL,
	`object_key` text NOT NULL,
	`byte_size` integer,
	`sha256` text,
	`width` integer,
	`height` integer,
	`mime_type` text,
	`expires_at` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `uploads_workspace` ON `uploads` (`workspace_id`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL
);
