CREATE TABLE `batches` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`status` text NOT NULL,
	`total` integer NOT NULL,
	`options` text NOT NULL,
	`created_at` text NOT NULL,
	`completed_at` text,
	`completed_event_at` text
);
--> statement-breakpoint
CREATE INDEX `batches_workspace` ON `batches` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text,
	`secret_ciphertext` text NOT NULL,
	`created_at` text NOT NULL,
	`disabled_at` text,
	`disabled_reason` text
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_workspace` ON `webhook_endpoints` (`workspace_id`);