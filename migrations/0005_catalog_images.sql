CREATE TABLE `catalog_images` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`status` text NOT NULL,
	`options` text NOT NULL,
	`references` integer NOT NULL,
	`result_key` text,
	`model_version` text,
	`warnings` text,
	`error_code` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	`expires_at` text,
	`result_deleted_at` text
);
--> statement-breakpoint
CREATE INDEX `catalog_images_workspace` ON `catalog_images` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `catalog_images_expiry` ON `catalog_images` (`expires_at`);