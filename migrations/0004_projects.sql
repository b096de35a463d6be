CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`source_job_id` text NOT NULL,
	`source_key` text NOT NULL,
	`source_size` integer NOT NULL,
	`source_sha256` text NOT NULL,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`refinements_used` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `projects_workspace_created` ON `projects` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `revisions` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`base_revision_id` text,
	`strokes` text NOT NULL,
	`recipe` text,
	`refinement_id` text,
	`mask_key` text NOT NULL,
	`mask_size` integer NOT NULL,
	`mask_sha256` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `revisions_project_number` ON `revisions` (`project_id`,`number`);--> statement-breakpoint
CREATE UNIQUE INDEX `revisions_refinement` ON `revisions` (`refinement_id`);